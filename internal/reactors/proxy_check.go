package reactors

import "github.com/tokenvault/tokenvault/internal/unit"

// CheckProxyRequest checks req's fields, all but its transforms' code
// (which a sandbox worker checks: ProxyTransformCode), and returns its
// configuration as plain JSON values. It reconciles the two ways of
// naming the application: application_id alone becomes application,
// both must agree. validName checks the name (the rule every named
// object shares); destinationProblem is the outbound policy's objection
// to a destination URL, "" for none. Returns Invalid with the fields.
func CheckProxyRequest(req *ProxyRequest, validName func(string, unit.FieldErrors), destinationProblem func(string) string) (map[string]any, error) {
	fe := unit.FieldErrors{}
	validName(req.Name, fe)
	switch {
	case req.ApplicationID == "":
	case req.Application == nil:
		req.Application = &Ref{ID: req.ApplicationID}
	case req.Application.ID != req.ApplicationID:
		fe.Add("application_id", "differs from application.id; send one of them, or the same id in both")
	}
	if req.DestinationURL == "" {
		fe.Add("destination_url", "is required")
	} else if problem := destinationProblem(req.DestinationURL); problem != "" {
		fe.Add("destination_url", "%s", problem)
	}
	for _, tr := range proxyTransforms(req) {
		if tr.t != nil && tr.t.Code == "" {
			fe.Add(tr.field+".code", "is required")
		}
	}
	conf, err := NormalizeConfiguration(req.Configuration)
	if err != nil {
		return nil, err
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	return conf, nil
}

// ProxyTransformCode calls check with the code of each transform req
// sets, and the field that names it, in order, up to the first error.
func ProxyTransformCode(req *ProxyRequest, check func(code, field string) error) error {
	for _, tr := range proxyTransforms(req) {
		if tr.t != nil {
			if err := check(tr.t.Code, tr.field+".code"); err != nil {
				return err
			}
		}
	}
	return nil
}

// proxyTransforms are req's transforms, named as their fields.
func proxyTransforms(req *ProxyRequest) []struct {
	field string
	t     *ProxyTransform
} {
	return []struct {
		field string
		t     *ProxyTransform
	}{{"request_transform", req.RequestTransform}, {"response_transform", req.ResponseTransform}}
}
