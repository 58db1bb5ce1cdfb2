package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestSecretNeverPrints(t *testing.T) {
	const value = "pub_live-key-value"
	s := Secret(value)
	type holder struct {
		Key Secret `json:"key"`
	}
	h := holder{Key: s}
	outputs := map[string]string{}
	for _, verb := range []string{"%s", "%v", "%+v", "%#v", "%q", "%x", "%X", "%d", "%10s", "%-20v", "%T"} {
		outputs["Sprintf "+verb] = fmt.Sprintf(verb, s)
		outputs["Sprintf struct "+verb] = fmt.Sprintf(verb, h)
		outputs["Sprintf pointer "+verb] = fmt.Sprintf(verb, &h)
	}
	outputs["Sprint"] = fmt.Sprint(s)
	outputs["Sprintln slice"] = fmt.Sprintln([]Secret{s})
	outputs["String"] = s.String()
	outputs["GoString"] = s.GoString()
	b, _ := json.Marshal(h)
	outputs["json"] = string(b)
	b, _ = s.MarshalText()
	outputs["text"] = string(b)
	var sl bytes.Buffer
	slog.New(slog.NewJSONHandler(&sl, nil)).Info("m", "key", s)
	outputs["slog"] = sl.String()
	var zl bytes.Buffer
	zl1 := zerolog.New(&zl)
	zl1.Info().Interface("key", s).Stringer("key2", s).Msg("m")
	outputs["zerolog"] = zl.String()
	var zlErr bytes.Buffer
	zl2 := zerolog.New(&zlErr)
	zl2.Error().Err(fmt.Errorf("bad key %v", s)).Msg("m")
	outputs["zerolog err"] = zlErr.String()

	for name, out := range outputs {
		if strings.Contains(out, value) {
			t.Errorf("%s leaks the secret: %q", name, out)
		}
		if name != "Sprintf %T" && !strings.Contains(out, "[REDACTED]") && !strings.HasPrefix(name, "Sprintf struct %T") && !strings.HasPrefix(name, "Sprintf pointer %T") {
			t.Errorf("%s does not say [REDACTED]: %q", name, out)
		}
	}
	if s.Reveal() != value {
		t.Errorf("Reveal() = %q", s.Reveal())
	}
}
