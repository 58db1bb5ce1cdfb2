package service

import (
	"errors"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// parseFormWithParseForm is parseForm as it was written on
// http.Request.ParseForm: the oracle the service's own form reading must
// agree with, parameter for parameter and refusal for refusal.
func parseFormWithParseForm(s *Service, w http.ResponseWriter, r *http.Request) (url.Values, *apiError) {
	if int64(len(r.URL.RawQuery)) > s.maxBody {
		return nil, errTooLarge
	}
	if r.Method == http.MethodPost {
		if r.ContentLength > s.maxBody {
			return nil, errTooLarge
		}
		ct := r.Header.Get("Content-Type")
		if ct == "" {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/x-www-form-urlencoded" {
			if r.ContentLength != 0 {
				return nil, errUnsupportedBody
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	}
	if err := r.ParseForm(); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, errTooLarge
		}
		return nil, invalidParam("The query or body is not validly form-encoded.")
	}
	return r.Form, nil
}

// formRequest is one request as parseForm sees it. A Content-Type of "-"
// sends none; a length of -2 sends the body's.
type formRequest struct {
	method, query, contentType, body string
	length                           int64
}

func (fr formRequest) build() *http.Request {
	r := httptest.NewRequest(fr.method, "/3.0/verify", strings.NewReader(fr.body))
	r.URL.RawQuery = fr.query
	r.ContentLength = fr.length
	if fr.length == -2 {
		r.ContentLength = int64(len(fr.body))
	}
	if fr.contentType != "-" {
		r.Header.Set("Content-Type", fr.contentType)
	}
	return r
}

// checkFormAsParseForm parses fr both ways and fails t where they differ,
// and where parseForm changed the request's header.
func checkFormAsParseForm(t *testing.T, s *Service, fr formRequest) {
	t.Helper()
	want, wantErr := parseFormWithParseForm(s, httptest.NewRecorder(), fr.build())
	r := fr.build()
	before := r.Header.Clone()
	got, gotErr := s.parseForm(httptest.NewRecorder(), r)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && *gotErr != *wantErr {
		t.Fatalf("%+v: error %v, ParseForm's %v", fr, gotErr, wantErr)
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("%+v: parameters %q, ParseForm's %q", fr, got, want)
	}
	if !maps.EqualFunc(r.Header, before, slices.Equal) {
		t.Fatalf("%+v: the request's header changed: %q, was %q", fr, r.Header, before)
	}
}

// TestParseFormAsParseForm: the service reads a request's parameters as
// http.Request.ParseForm did, body before query, and refuses what it
// refused, without writing to the request.
func TestParseFormAsParseForm(t *testing.T) {
	s := newTestService(t, fixtures(), nil, WithMaxBodyBytes(256))
	const form = "application/x-www-form-urlencoded"
	big := "city=" + strings.Repeat("x", 300)
	tests := []struct {
		name string
		formRequest
	}{
		{"GET query", formRequest{"GET", "addressLine=1+Main&addressLine=Dun&country=IE", "-", "", 0}},
		{"GET ignores a body", formRequest{"GET", "country=IE", "-", "country=FR", -2}},
		{"GET empty", formRequest{"GET", "", "-", "", 0}},
		{"POST body", formRequest{"POST", "", form, "addressLine=1+Main&country=IE", -2}},
		{"POST body before query", formRequest{"POST", "addressLine=q&token=t", form, "addressLine=b&country=IE", -2}},
		{"POST without Content-Type", formRequest{"POST", "", "-", "addressLine=1+Main&country=IE", -2}},
		{"POST with charset", formRequest{"POST", "", form + "; charset=utf-8", "country=IE", -2}},
		{"POST media type in capitals", formRequest{"POST", "", "Application/X-WWW-Form-Urlencoded", "country=IE", -2}},
		{"POST of unknown length", formRequest{"POST", "", form, "country=IE", -1}},
		{"POST JSON", formRequest{"POST", "country=IE", "application/json", `{"a":1}`, -2}},
		{"POST JSON, empty", formRequest{"POST", "country=IE", "application/json", "", 0}},
		{"POST multipart, empty", formRequest{"POST", "country=IE", "multipart/form-data; boundary=x", "", 0}},
		{"POST bad media type", formRequest{"POST", "country=IE", "a/b/c", "country=FR", -2}},
		{"POST bad media type, empty", formRequest{"POST", "country=IE", "a/b/c", "", 0}},
		{"POST bad parameter", formRequest{"POST", "country=IE", form + "; x", "country=FR", -2}},
		{"POST bad parameter, empty", formRequest{"POST", "country=IE", form + "; x", "", 0}},
		{"POST declared too large", formRequest{"POST", "", form, "country=IE", 257}},
		{"POST body too large", formRequest{"POST", "", form, big, -2}},
		{"POST too large, unknown length", formRequest{"POST", "", form, big, -1}},
		{"POST too large, length understated", formRequest{"POST", "", form, big, 10}},
		{"query too large", formRequest{"GET", big, "-", "", 0}},
		{"bad escape in the body", formRequest{"POST", "country=IE", form, "addressLine=%zz", -2}},
		{"bad escape in the query", formRequest{"POST", "addressLine=%zz", form, "country=IE", -2}},
		{"semicolon", formRequest{"GET", "country=IE;x=1", "-", "", 0}},
		{"empty pairs and keys", formRequest{"POST", "&&=x&country", form, "&a=&=&b", -2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkFormAsParseForm(t, s, tc.formRequest) })
	}
}

// FuzzParseForm compares parseForm with ParseForm on arbitrary requests.
func FuzzParseForm(f *testing.F) {
	s := newTestService(f, fixtures(), nil, WithMaxBodyBytes(256))
	f.Add(true, "token=t&addressLine=x", "application/x-www-form-urlencoded", "addressLine=1+Main&country=IE", int64(-2))
	f.Add(true, "", "-", "a=%zz;b", int64(-1))
	f.Add(false, "a=1&a=2&b", "-", "", int64(0))
	f.Add(true, "", "text/plain; charset=\"", "", int64(0))
	f.Fuzz(func(t *testing.T, post bool, query, ct, body string, length int64) {
		method := http.MethodGet
		if post {
			method = http.MethodPost
		}
		if length < -2 || length > int64(len(body))+300 {
			length = -2
		}
		if strings.ContainsAny(ct, "\r\n\x00") {
			ct = "-"
		}
		checkFormAsParseForm(t, s, formRequest{method, query, ct, body, length})
	})
}
