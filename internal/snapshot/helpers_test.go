package snapshot

import (
	"encoding/json"

	"github.com/attkit/attkit/internal/pyjson"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func marshal(o pyjson.Object) []byte { return pyjson.Marshal(o) }
