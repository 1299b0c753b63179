// api.js calls the public REST API, at the origin's root, with the
// signed-in key in the SVC-API-KEY header. Failures become ApiError, which
// carries the problem+json detail and field errors.
import { getKey } from './session.js';

export class ApiError extends Error {
  constructor(status, problem) {
    const p = problem && typeof problem === 'object' ? problem : {};
    super(p.detail || p.title || `HTTP ${status}`);
    this.status = status;
    this.detail = p.detail || p.title || `HTTP ${status}`;
    this.errors = p.errors && typeof p.errors === 'object' ? p.errors : {};
    this.problem = p;
  }
}

// problemOf reads an answer's body as the API's error: a problem+json
// object, or a proxy's {proxy_error: problem}.
export function problemOf(body) {
  if (body && typeof body === 'object' && body.proxy_error && typeof body.proxy_error === 'object') return body.proxy_error;
  return body;
}

let unauthorized = () => {};

// onUnauthorized sets what happens when the API refuses the signed-in key
// (401): the console signs out.
export function onUnauthorized(fn) {
  unauthorized = fn;
}

// api sends method path with body (JSON unless contentType says
// otherwise) and resolves to the decoded JSON answer, null for none.
export async function api(method, path, body, opts = {}) {
  const headers = { Accept: 'application/json, application/problem+json' };
  const key = opts.key !== undefined ? opts.key : getKey();
  if (key) headers['SVC-API-KEY'] = key;
  let payload;
  if (body !== undefined && body !== null) {
    headers['Content-Type'] = opts.contentType || 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, { method, headers, body: payload, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' });
  } catch (e) {
    throw new ApiError(0, { detail: `the server could not be reached (${e.message})` });
  }
  const text = await res.text();
  let data = null;
  if (text !== '') {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (res.status === 401 && opts.key === undefined && key) unauthorized();
  if (!res.ok) throw new ApiError(res.status, problemOf(data) || { detail: typeof data === 'string' ? data : undefined });
  return data;
}

// query builds "?a=1&b=2" from params, leaving out empty values.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    for (const one of [v].flat()) q.append(k, String(one));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}
