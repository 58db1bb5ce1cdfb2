package service_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/service"
	"github.com/rs/zerolog"
)

// townMatcher knows one town and nothing else.
type townMatcher struct{}

func (townMatcher) Match(q gazetteer.Query) gazetteer.Match {
	return gazetteer.Match{Verdict: gazetteer.VerdictConfirm, Level: gazetteer.LevelLocality,
		City: "Dún Laoghaire", Region: "Dublin", Country: q.Country}
}

func ExampleNew() {
	in := service.NewIntegration("pub_example")
	in.AllowedCountries = []string{"IE"}
	svc, err := service.New(townMatcher{}, []service.Integration{in})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(svc)
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/3.0/createtoken", nil)
	req.SetBasicAuth("pub_example", "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	var tok api.TokenResponse
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()

	resp, err = http.PostForm(srv.URL+"/3.0/verify", url.Values{
		"token": {tok.Token}, "addressLine": {"dun laoghaire"}, "country": {"Ireland"},
	})
	if err != nil {
		panic(err)
	}
	var v api.VerifyResponse
	_ = json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	fmt.Println(v.Action, v.Information.MatchLevel, v.Form.Message.ID, v.Address.Label, v.Address.Highlights)
	// Output: Confirm Locality 1201 [Dún Laoghaire Dublin] [[] [0 6]]
}

func ExampleNewLocal() {
	rt, key, err := service.NewLocal(townMatcher{}, zerolog.Nop())
	if err != nil {
		panic(err)
	}
	hc := &http.Client{Transport: rt}
	req, _ := http.NewRequest(http.MethodGet, service.LocalBaseURL+"/3.0/createtoken", nil)
	req.SetBasicAuth(key, "")
	resp, err := hc.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.HasPrefix(key, "pub_"))
	// Output: 200 true
}
