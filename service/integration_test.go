package service

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestLoadKeys(t *testing.T) {
	got, err := LoadKeys(filepath.Join("testdata", "keys", "good.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Integration{
		{
			Key: "pub_4b3e9a2c-1d7f-4e21-9c0a-6f5b8d2e1a37", Name: "CRM import",
			AllowedCountries: []string{"IE", "GB"}, POBoxes: false, Location: true,
			Form:              FormSettings{Lines: true, City: true, Postcode: true, Country: true},
			RequestsPerSecond: 20, Burst: 5, TokenTTL: 10 * time.Minute,
		},
		{Key: "pub_minimal", Name: "unnamed", POBoxes: true, Location: true, Form: AllFields, TokenTTL: DefaultTokenTTL},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadKeys:\n got %+v\nwant %+v", got, want)
	}
	if _, err := New(fixtures(), got); err != nil {
		t.Fatalf("New with loaded keys: %v", err)
	}
}

func TestLoadKeysErrors(t *testing.T) {
	const secretKey = "pub_secret-key"
	tests := []struct {
		name, body, want string
	}{
		{"not json", `{"integrations": [`, "unexpected EOF"},
		{"syntax error", "{\n  \"integrations\": [}\n", "line 2 column"},
		{"empty", `{"integrations": []}`, "no integrations"},
		{"array", `[{"key":"pub_x"}]`, "line 1 column 1: json: "}, // jsonv2 words its errors at random: match ours
		{"unknown member", `{"integrations": [{"key":"pub_x","poBox":false}]}`, `unknown member "poBox" in integration 1`},
		{"member of another case", `{"integrations": [{"key":"pub_x","Key":"pub_y"}]}`, `unknown member "Key" in integration 1`},
		{"repeated key", "{\"integrations\": [{\"key\":\"pub_a\",\"name\":\"crm\",\n \"key\":\"" + secretKey + "\"}]}", `line 2 column 2: member "key" is given twice in integration 1`},
		{"repeated nested member", `{"integrations": [{"key":"pub_a","form":{"city":true,"city":false}}]}`, `member "city" is given twice in integration 1 member "form"`},
		{"repeated top-level member", `{"integrations": [{"key":"pub_a"}], "integrations": [{"key":"pub_b"}]}`, `member "integrations" is given twice in the top-level object`},
		{"repeated unknown member", `{"integrations": [{"key":"pub_a"}], "x": 1, "x": 2}`, `unknown member "x"`},
		{"missing key", `{"integrations": [{"name":"a"}]}`, `integration 1 ("a"): key is empty`},
		{"space in key", `{"integrations": [{"key":"pub x"}]}`, "printable ASCII"},
		{"duplicate", `{"integrations": [{"key":"` + secretKey + `"},{"key":"` + secretKey + `","name":"b"}]}`, `integration 2 ("b"): same key as integration 1`},
		{"bad country", `{"integrations": [{"key":"pub_x","allowedCountries":["Narnia"]}]}`, `"Narnia" is not a recognised country`},
		{"bad ttl", `{"integrations": [{"key":"pub_x","tokenTTL":"soon"}]}`, "tokenTTL"},
		{"short ttl", `{"integrations": [{"key":"pub_x","tokenTTL":"10ms"}]}`, "at least 1s"},
		{"negative rate", `{"integrations": [{"key":"pub_x","requestsPerSecond":-1}]}`, "requestsPerSecond"},
		{"negative burst", `{"integrations": [{"key":"pub_x","burst":-1}]}`, "burst"},
		{"trailing data", `{"integrations": [{"key":"pub_x"}]} {}`, "after the JSON object"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadKeys(path)
			if err == nil {
				t.Fatal("LoadKeys accepted it")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q, want %q and the path", err, tc.want)
			}
			if strings.Contains(err.Error(), secretKey) {
				t.Errorf("error shows the key: %v", err)
			}
		})
	}
	if _, err := LoadKeys(filepath.Join(dir, "absent.json")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("absent file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestNewDevIntegration(t *testing.T) {
	a, err := NewDevIntegration()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewDevIntegration()
	re := regexp.MustCompile(`^pub_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if !re.MatchString(a.Key) || a.Key == b.Key {
		t.Fatalf("dev keys %q %q", a.Key, b.Key)
	}
	if a.RequestsPerSecond != 0 || !a.POBoxes || !a.Location || a.Form != AllFields || a.TokenTTL != DefaultTokenTTL {
		t.Errorf("dev integration %+v", a)
	}
}

// TestIntegrations: a keys file gives its integrations; none gives one
// development integration, with a fresh key each time.
func TestIntegrations(t *testing.T) {
	want, err := LoadKeys(filepath.Join("testdata", "keys", "good.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, dev, err := Integrations(filepath.Join("testdata", "keys", "good.json"))
	if err != nil || dev || !reflect.DeepEqual(got, want) {
		t.Errorf("from the keys file: %+v, dev %v, %v", got, dev, err)
	}
	if _, _, err := Integrations(filepath.Join("testdata", "keys", "missing.json")); err == nil {
		t.Error("a missing keys file gave integrations")
	}
	a, dev, err := Integrations("")
	b, _, _ := Integrations("")
	if err != nil || !dev || len(a) != 1 || a[0].Name != "development" || !strings.HasPrefix(a[0].Key, "pub_") || a[0].Key == b[0].Key {
		t.Errorf("without a keys file: %+v, dev %v, %v (then key %s)", a, dev, err, b[0].Key)
	}
}
