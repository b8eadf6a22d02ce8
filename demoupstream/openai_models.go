package demoupstream

// demoModels are the ids GET .../models lists. Any model id is accepted by
// the model calls; these exist so that a client that discovers models
// before calling one finds something to pick.
var demoModels = []string{"demo-chat", "demo-mini", "demo-embed"}

// demoModelsCreated is a fixed "created" time (2025-01-01T00:00:00Z) so that
// the model list is the same bytes on every call.
const demoModelsCreated = 1735689600

// modelList is the body of GET .../models, built once.
var modelList = func() []byte {
	b := []byte(`{"object":"list","data":[`)
	for i, id := range demoModels {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendString(b, id)
		b = append(b, `,"object":"model","created":`...)
		b = appendInt(b, demoModelsCreated)
		b = append(b, `,"owned_by":"modelgate"}`...)
	}
	return append(b, `]}`...)
}()
