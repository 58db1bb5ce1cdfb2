package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/runs"
)

// connectOptions say which service to verify against.
type connectOptions struct {
	baseURL    string
	apiKeyFile string
	apiKeyFlag string
	reference  string
	tokenTTL   time.Duration
	method     string
	workers    int
}

// readAPIKey takes the key from --api-key-file or ADDRCLEAN_API_KEY; a key
// given as a flag value is refused because it shows in the process list.
func readAPIKey(o connectOptions) (api.Secret, error) {
	if o.apiKeyFlag != "" {
		return "", usageErrorf("--api-key is refused: a key on the command line shows in the process list; put it in a file and pass --api-key-file, or set ADDRCLEAN_API_KEY")
	}
	if o.apiKeyFile != "" {
		b, err := os.ReadFile(o.apiKeyFile)
		if err != nil {
			return "", withCode(exitFatal, fmt.Errorf("reading --api-key-file: %w", err))
		}
		key := strings.TrimSpace(string(b))
		if key == "" {
			return "", withCode(exitFatal, fmt.Errorf("--api-key-file %s is empty", o.apiKeyFile))
		}
		return api.Secret(key), nil
	}
	if key := strings.TrimSpace(os.Getenv("ADDRCLEAN_API_KEY")); key != "" {
		return api.Secret(key), nil
	}
	return "", nil
}

// connect connects to the service (runs.Connect), reading the key first.
func connect(ctx context.Context, o connectOptions, log zerolog.Logger) (*runs.Connection, error) {
	key := func() (api.Secret, error) { return readAPIKey(o) }
	return runs.Connect(ctx, runs.Service{BaseURL: o.baseURL, Key: key, Reference: o.reference, Version: version},
		runs.ConnectOptions{TokenTTL: o.tokenTTL, Method: o.method, Workers: o.workers}, log)
}

// describeFatal wraps a run-stopping error with what to fix, where that is
// known, and then suffix.
func describeFatal(err error, suffix string) error {
	var se *api.StatusError
	var msg string
	switch {
	case errors.Is(err, api.ErrUnauthorized):
		msg = "the service refused the API key or token (401): check --api-key-file / ADDRCLEAN_API_KEY and that the key is active"
	case errors.As(err, &se) && se.StatusCode == http.StatusForbidden:
		msg = "the service refused this key (403): the integration is not allowed to verify; check its settings in the account console"
	case errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusMethodNotAllowed):
		msg = fmt.Sprintf("the service answered %d to %s: check --base-url (it should be the part before /3.0/)", se.StatusCode, se.Op)
	default:
		return fmt.Errorf("%w%s", err, suffix)
	}
	return fmt.Errorf("%s (%w)%s", msg, err, suffix)
}
