// session.js holds the API key the user signed in with: in this module's
// memory and in sessionStorage (so a reload of the tab keeps it; closing
// the tab forgets it). Never localStorage, a cookie or a URL.

const STORAGE = 'tokenvault.console.key';
let key = null;

// getKey is the signed-in key, or null.
export function getKey() {
  if (key === null) {
    try {
      key = sessionStorage.getItem(STORAGE);
    } catch {
      key = null;
    }
  }
  return key;
}

// signIn keeps k as the key.
export function signIn(k) {
  key = k;
  try {
    sessionStorage.setItem(STORAGE, k);
  } catch {
    // Storage refused (private mode): the key lives in memory only.
  }
}

// signOut forgets the key, in memory and in sessionStorage.
export function signOut() {
  key = null;
  try {
    sessionStorage.removeItem(STORAGE);
  } catch {
    // Nothing stored.
  }
}

// storageName is where the key is kept in sessionStorage (for the tests).
export const storageName = STORAGE;
