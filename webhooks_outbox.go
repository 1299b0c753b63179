package tokenvault

// queueWebhookEvent writes, in t's transaction, one delivery of ev for
// each of targets and its entry in the delivery queue, and has the
// dispatcher woken once t commits.
//
// SKELETON: writes nothing yet; the delivery engine replaces this file
// whole (no webhook can be created before it lands).
func (t *txn) queueWebhookEvent(tid string, ev outgoingEvent, targets []*webhookRecord) error {
	return nil
}
