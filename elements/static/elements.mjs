// elements.mjs: the elements as an ES module. It loads elements.js (which
// defines the global TokenVaultElements) from the same directory, and
// tells it where the vault is: import.meta.url, since a module has no
// document.currentScript.
import './elements.js';

const base = new URL('./', import.meta.url).href;
const E = globalThis.TokenVaultElements;

export const ElementsError = E.ElementsError;

// create is TokenVaultElements.create, with vaultURL defaulting to the
// directory this module was loaded from.
export function create(options = {}) {
  return E.create({ vaultURL: base, ...options });
}

export default { create, ElementsError, version: E.version };
