package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// metricsContentType is the Prometheus text exposition format, version
// 0.0.4, which every Prometheus server and most agents read.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// ServeHTTP answers GET /metrics.
func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	m.writeText(&b)
	w.Header().Set("Content-Type", metricsContentType)
	w.Write(b.Bytes())
}

// writeText writes every metric in the text format, series sorted by their
// labels so that two scrapes of the same counts are byte for byte the
// same. It holds the lock while it formats (into memory, not the network:
// ServeHTTP buffers), which takes microseconds: the bounded labels allow
// only so many series, in practice a few hundred.
func (m *metrics) writeText(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()

	fmt.Fprint(w, "# HELP tokenvault_http_requests_total HTTP requests answered, by method, route pattern and status.\n")
	fmt.Fprint(w, "# TYPE tokenvault_http_requests_total counter\n")
	reqs := make([]requestKey, 0, len(m.requests))
	for k := range m.requests {
		reqs = append(reqs, k)
	}
	slices.SortFunc(reqs, func(a, b requestKey) int {
		return cmp.Or(cmp.Compare(a.method, b.method), cmp.Compare(a.route, b.route), cmp.Compare(a.status, b.status))
	})
	for _, k := range reqs {
		fmt.Fprintf(w, "tokenvault_http_requests_total{method=\"%s\",route=\"%s\",status=\"%d\"} %d\n",
			escapeLabelValue(k.method), escapeLabelValue(k.route), k.status, m.requests[k])
	}

	fmt.Fprint(w, "# HELP tokenvault_http_request_duration_seconds Time to answer HTTP requests, by method and route pattern.\n")
	fmt.Fprint(w, "# TYPE tokenvault_http_request_duration_seconds histogram\n")
	routes := make([]routeKey, 0, len(m.durations))
	for k := range m.durations {
		routes = append(routes, k)
	}
	slices.SortFunc(routes, func(a, b routeKey) int {
		return cmp.Or(cmp.Compare(a.method, b.method), cmp.Compare(a.route, b.route))
	})
	for _, k := range routes {
		h := m.durations[k]
		labels := "method=\"" + escapeLabelValue(k.method) + "\",route=\"" + escapeLabelValue(k.route) + "\""
		var cumulative uint64
		for i, n := range h.counts {
			cumulative += n
			le := math.Inf(1)
			if i < len(durationBuckets) {
				le = durationBuckets[i]
			}
			fmt.Fprintf(w, "tokenvault_http_request_duration_seconds_bucket{%s,le=\"%s\"} %d\n", labels, formatFloat(le), cumulative)
		}
		fmt.Fprintf(w, "tokenvault_http_request_duration_seconds_sum{%s} %s\n", labels, formatFloat(h.sum))
		fmt.Fprintf(w, "tokenvault_http_request_duration_seconds_count{%s} %d\n", labels, h.count)
	}

	fmt.Fprint(w, "# HELP tokenvault_http_requests_in_flight HTTP requests being served, this scrape included.\n")
	fmt.Fprint(w, "# TYPE tokenvault_http_requests_in_flight gauge\n")
	fmt.Fprintf(w, "tokenvault_http_requests_in_flight %d\n", m.inFlight.Load())
}

// labelEscaper escapes a label value as the text format requires:
// backslash, double quote and line feed.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabelValue(s string) string { return labelEscaper.Replace(s) }

// formatFloat writes a sample value or bucket bound as the format spells
// it: the shortest decimal that reads back the same; strconv already spells
// infinity "+Inf", as the format does.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
