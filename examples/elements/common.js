// What both pages do: styles, mounting, showing events and errors.
export const style = {
  base: { fontFamily: 'system-ui, sans-serif', fontSize: '16px', color: '#1f2328', placeholderColor: '#8c959f', padding: '10px 12px' },
  focus: { backgroundColor: '#f0f6ff' },
  invalid: { color: '#cf222e' },
  complete: { color: '#1a7f37' },
};

export async function mountCheckout(elements, submit, describe) {
  const status = document.getElementById('status');
  const errors = document.getElementById('errors');
  const pay = document.getElementById('pay');
  const fields = [
    elements.field('card-number', { label: 'Card number' }),
    elements.field('card-expiry', { label: 'Expiration date' }),
    elements.field('card-cvc', { label: 'Security code' }),
  ];
  const shown = {};
  for (const f of fields) {
    f.on('change', (e) => {
      if (e.kind === 'card-number') document.getElementById('brand').textContent = e.brand === 'unknown' ? '' : e.brand;
      shown[e.kind] = e.error ?? '';
      errors.textContent = Object.values(shown).filter(Boolean).join(' ');
    });
  }
  try {
    await Promise.all(fields.map((f, i) => f.mount(['#number', '#expiry', '#cvc'][i])));
    pay.disabled = false;
  } catch (e) {
    status.textContent = e.message; // frame_blocked: this origin is not in allowed_origins
    return;
  }
  pay.addEventListener('click', async () => {
    pay.disabled = true;
    status.textContent = 'Working...';
    try {
      status.textContent = describe(await submit(elements));
    } catch (e) {
      status.textContent = e.message + (e.fields ? ': ' + e.fields.map((f) => `${f.kind} ${f.message}`).join(', ') : '');
    } finally {
      pay.disabled = false;
    }
  });
}
