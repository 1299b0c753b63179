// The merchant's script: mount three card fields and tokenize, with
// TokenVaultElements, the global elements.js defined. The
// public key comes from the page's URL (?key=...) to keep the example
// free of editing; a real page has it in its source: it is not a secret.
import { style, mountCheckout } from './common.js';

const key = new URLSearchParams(location.search).get('key');
const status = document.getElementById('status');
if (!key) {
  status.textContent = 'Add ?key=<public key> to the URL (see README.md).';
} else {
  mountCheckout(TokenVaultElements.create({ key, style }), (elements) => elements.tokenize({ type: 'card' }),
    (t) => `Token ${t.id} (${t.brand} ending ${t.last4}). Read it back with a private key: GET /tokens/${t.id}`);
}
