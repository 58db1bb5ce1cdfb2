package api

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"nil", nil, KindNone},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), KindFatal},
		{"canceled beats transient", &scrubbedError{kind: KindTransient, err: context.Canceled}, KindFatal},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), KindTransient},
		{"net timeout", &net.OpError{Op: "read", Err: timeoutErr{}}, KindTransient},
		{"unauthorized", fmt.Errorf("run: %w", ErrUnauthorized), KindFatal},
		{"invalid address", fmt.Errorf("%w: no country", ErrInvalidAddress), KindPermanent},
		{"unexpected EOF", io.ErrUnexpectedEOF, KindTransient},
		{"EOF", io.EOF, KindTransient},
		{"reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, KindTransient},
		{"refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, KindTransient},
		{"certificate", fmt.Errorf("tls: %w", x509.UnknownAuthorityError{}), KindFatal},
		{"hostname", x509.HostnameError{Host: "h"}, KindFatal},
		{"unknown", errors.New("something odd"), KindTransient},
		{"rate limited", &RateLimitedError{RetryAfter: time.Second}, KindRateLimited},
		{"wrapped rate limited", fmt.Errorf("row 3: %w", &RateLimitedError{Status: &StatusError{Op: "verify", StatusCode: 429}}), KindRateLimited},
		{"fatal kind", &scrubbedError{kind: KindFatal, err: errors.New("x")}, KindFatal},
	}
	for code, want := range map[int]Kind{
		301: KindFatal, 302: KindFatal, 400: KindPermanent, 401: KindFatal, 403: KindFatal,
		404: KindFatal, 405: KindFatal, 408: KindTransient, 409: KindPermanent, 413: KindPermanent,
		414: KindPermanent, 422: KindPermanent, 429: KindRateLimited, 500: KindTransient,
		501: KindFatal, 502: KindTransient, 503: KindTransient, 504: KindTransient,
	} {
		tests = append(tests, struct {
			name string
			err  error
			want Kind
		}{fmt.Sprintf("HTTP %d", code), fmt.Errorf("w: %w", &StatusError{Op: "verify", StatusCode: code}), want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"5", 5 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"1.5", 1500 * time.Millisecond},
		{"-3", 0},
		{"NaN", 0},
		{"soon", 0},
		{"99999999999999999999", maxRetryAfter},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{now.Add(-30 * time.Second).Format(http.TimeFormat), 0},
		{"Sunday, 22-Nov-26 06:00:00 GMT", 24 * time.Hour}, // RFC 850
		{"Sun Nov 22 06:00:00 2026", 24 * time.Hour},       // ANSI C
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&StatusError{Op: "verify", StatusCode: 400, Message: "Missing country"}, "api: verify: HTTP 400 Bad Request: Missing country"},
		{&StatusError{Op: "createtoken", StatusCode: 599}, "api: createtoken: HTTP 599"},
		{&StatusError{Op: "verify", StatusCode: 301, Location: "https://x/3.0/verify"}, "api: verify: HTTP 301 Moved Permanently (redirected to https://x/3.0/verify: check the base URL)"},
		{&RateLimitedError{RetryAfter: 2 * time.Second, Status: &StatusError{Op: "verify", StatusCode: 429, Message: "Slow down"}}, "api: verify: rate limited (HTTP 429), retry after 2s: Slow down"},
		{&RateLimitedError{}, "api: verify: rate limited (HTTP 429)"},
		{&authError{why: "the API key was refused", status: &StatusError{Op: "createtoken", StatusCode: 401, Message: "Invalid key"}}, "api: createtoken: unauthorized: the API key was refused (HTTP 401: Invalid key)"},
		{fmt.Errorf("%w: no country", ErrInvalidAddress), "api: invalid address: no country"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	if (&RateLimitedError{}).Unwrap() != nil {
		t.Error("Unwrap of an empty RateLimitedError is not nil")
	}
	for k := KindNone; k <= KindFatal+1; k++ {
		if k.String() == "" {
			t.Errorf("Kind(%d) has no name", k)
		}
	}
}

func TestScrub(t *testing.T) {
	tests := []struct {
		in      string
		secrets []string
		want    string
	}{
		{"token abc/def+g expired", []string{"abc/def+g"}, "token [REDACTED] expired"},
		{"GET /v?token=abc%2Fdef%2Bg&x", []string{"abc/def+g"}, "GET /v?token=[REDACTED]&x"},
		{`invalid character within "/x/abc~1def+g~0/1"`, []string{"abc/def+g~"}, `invalid character within "/x/[REDACTED]/1"`},
		{"HTTP 401", []string{"1"}, "HTTP 401"}, // too short to scrub
		{"nothing", nil, "nothing"},
	}
	for _, tt := range tests {
		if got := scrub(tt.in, tt.secrets...); got != tt.want {
			t.Errorf("scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
