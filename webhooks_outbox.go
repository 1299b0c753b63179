package tokenvault

import "errors"

// queueWebhookEvent writes, in t's transaction, one delivery of ev for
// each of targets and its entry in the delivery queue, and has the
// dispatcher woken once t commits.
//
// SKELETON: the delivery engine replaces this file whole.
func (t *txn) queueWebhookEvent(tid string, ev outgoingEvent, targets []*webhookRecord) error {
	return errors.New("tokenvault: webhook delivery is not built yet")
}
