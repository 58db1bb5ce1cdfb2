// Package service is a local implementation of the address-verification
// interface as an http.Handler: tokens, verify, integration settings, errors
// and per-key rate limits, answering from a gazetteer.
//
// The routes are GET /3.0/createtoken (HTTP Basic, the API key as user
// name), GET and POST /3.0/verify, and GET /healthz. Every answer other
// than /healthz is JSON; errors use the verify envelope
// {"type":"error","form":{"language":"en","message":{...}}} with the HTTP
// status and message ids listed in MESSAGES.md beside this file.
//
// Tokens are stateless: they carry an integration key id (never the key),
// an expiry and a nonce, signed with HMAC-SHA256, so replicas that share a
// signing secret and a keys file accept each other's tokens.
//
// NewLocal serves it in process through an http.RoundTripper, for clients
// that embed it: the same client and handler, no socket. Transport does
// the same for any handler, streaming its answer.
//
// It must not import the pipeline, readers or writers.
package service
