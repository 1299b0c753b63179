// app.js: sign-in, sign-out and the pages, routed by the location's hash
// (#/applications ...). The key is never put in the URL.
import { h, clear } from './dom.js';
import { api, ApiError, onUnauthorized } from './api.js';
import { getKey, signIn, signOut } from './session.js';
import { field, formError, showError } from './ui.js';
import * as overview from './pages/overview.js';
import * as applications from './pages/applications.js';
import * as tokens from './pages/tokens.js';
import * as logs from './pages/logs.js';
import * as reactors from './pages/reactors.js';
import * as proxies from './pages/proxies.js';
import * as members from './pages/members.js';
import * as webhooks from './pages/webhooks.js';
import * as approvals from './pages/approvals.js';

const pages = { overview, applications, tokens, logs, reactors, proxies, members, webhooks, approvals };

const main = () => document.getElementById('main');

function signInPage() {
  const keyInput = h('input', { id: 'signin-key', type: 'password', name: 'key', autocomplete: 'off', required: true, spellcheck: 'false' });
  const err = formError();
  const form = h('form', { class: 'panel signin', id: 'signin-form', novalidate: true },
    h('h1', { text: 'Sign in' }),
    h('p', { class: 'muted', text: 'Sign in with an API key: a management key administers the tenant; any other key sees what it may do. The key is kept in this tab only and forgotten when you sign out.' }),
    field('API key', keyInput, 'key'),
    err,
    h('button', { type: 'submit', class: 'primary', id: 'signin-submit' }, 'Sign in'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const k = keyInput.value.trim();
    if (!k) {
      showError(form, { detail: 'Enter an API key.', errors: { key: ['required'] } });
      return;
    }
    try {
      // /permissions answers any valid key: it tells a key that works
      // from one that does not, whatever the key may do.
      await api('GET', '/permissions', null, { key: k });
    } catch (e) {
      showError(form, e instanceof ApiError && e.status === 401 ? new ApiError(401, { detail: 'This key was not accepted.' }) : e);
      return;
    }
    keyInput.value = '';
    signIn(k);
    if (!location.hash || location.hash === '#/' || location.hash === '#/signin') location.hash = '#/overview';
    route();
  });
  clear(main()).append(form);
  keyInput.focus();
}

async function whoAmI() {
  const who = document.getElementById('who');
  who.textContent = 'Signed in';
  try {
    const app = await api('GET', '/applications/key');
    who.textContent = `Signed in as ${app.name} (${app.type})`;
  } catch {
    // A key without application:read cannot say which it is.
  }
}

let routed = 0;

// route shows the page the hash names, or the sign-in page.
export async function route() {
  const signedIn = Boolean(getKey());
  document.getElementById('nav').hidden = !signedIn;
  document.getElementById('sign-out').hidden = !signedIn;
  if (!signedIn) {
    document.getElementById('who').textContent = '';
    signInPage();
    return;
  }
  const name = (location.hash.replace(/^#\/?/, '').split(/[/?]/)[0]) || 'overview';
  const page = pages[name] || overview;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.getAttribute('href') === `#/${name}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const n = ++routed;
  if (n === 1 || !document.getElementById('who').textContent) whoAmI();
  const root = h('div', { id: `page-${name}`, class: 'page' });
  clear(main()).append(root);
  try {
    await page.render(root);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return; // signed out by onUnauthorized
    root.append(h('div', { class: 'form-error', role: 'alert', text: e.detail || e.message }));
  }
  if (n === routed) root.setAttribute('data-ready', 'true');
}

function doSignOut(message) {
  signOut();
  document.getElementById('who').textContent = '';
  routed = 0;
  history.replaceState(null, '', '#/signin');
  route();
  if (message) main().querySelector('.form-error')?.append(message);
}

document.getElementById('sign-out').addEventListener('click', () => doSignOut());
onUnauthorized(() => {
  if (getKey()) doSignOut('Your key is no longer accepted (revoked, regenerated or expired): sign in again.');
});
window.addEventListener('hashchange', route);
route();
