package events_test

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/prommetrics"
)

// metricValue is the value of the counter, or the sample count of the
// histogram, named name whose labels include label=value (when label is
// not "").
func metricValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := label == ""
			for _, l := range m.GetLabel() {
				match = match || l.GetName() == label && l.GetValue() == value
			}
			if !match {
				continue
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s{%s=%q}", name, label, value)
	return 0
}

// TestWebhookDeliveryMetrics: attempts by outcome, the lag of an
// acknowledged event, and a webhook the Vault disabled are counted, with
// no tenant or webhook id in any label.
func TestWebhookDeliveryMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) { o.Metrics = prommetrics.New(reg) })
	ok := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	gone := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	idOK := subscribe(t, e, ok.URL)
	idGone := subscribe(t, e, gone.URL)
	createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	vaulttest.WaitUntil(t, "the metrics", func() bool {
		return metricValue(t, reg, "tokenvault_event_delivery_attempts_total", "outcome", "delivered") == 1 &&
			metricValue(t, reg, "tokenvault_webhooks_disabled_total", "reason", "gone") == 1
	})
	for _, c := range []struct {
		name, label, value string
		want               float64
	}{
		{"tokenvault_event_delivery_attempts_total", "outcome", "retried", 1},
		{"tokenvault_event_delivery_attempts_total", "outcome", "gone", 1},
		{"tokenvault_event_delivery_attempts_total", "outcome", "failed", 0},
		{"tokenvault_event_delivery_lag_seconds", "", "", 1},
		{"tokenvault_webhooks_disabled_total", "reason", "failing", 0},
	} {
		if got := metricValue(t, reg, c.name, c.label, c.value); got != c.want {
			t.Errorf("%s{%s=%q} = %v, want %v", c.name, c.label, c.value, got, c.want)
		}
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				for _, id := range []string{e.Boot.Tenant.ID, idOK, idGone} {
					if l.GetValue() == id {
						t.Errorf("%s has the label %s=%s", mf.GetName(), l.GetName(), id)
					}
				}
			}
		}
	}
}
