// The module form: import the elements from the vault's origin. The page
// asks for a token intent, which its server converts into a token with
// a private key (POST /tokens with {"token_intent_id": id}).
import { create } from 'http://127.0.0.1:8080/elements/v1/elements.mjs';
import { style, mountCheckout } from './common.js';

const key = new URLSearchParams(location.search).get('key');
if (!key) {
  document.getElementById('status').textContent = 'Add ?key=<public key> to the URL (see README.md).';
} else {
  mountCheckout(create({ key, style }), (elements) => elements.createTokenIntent({ type: 'card' }),
    (i) => `Token intent ${i.id} (${i.card.brand} ending ${i.card.last4}, expires ${i.expires_at}).`);
}
