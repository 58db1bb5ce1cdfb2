// Package api is the client side of the address-verification interface: the
// wire types of the token and verify responses, a Client with a shared,
// single-flight token source, and typed errors a caller can branch on.
//
// It knows nothing about files or rows.
//
// # Using the client
//
// New takes the service's base URL and the API key as a Secret, which never
// prints. Verify sends one Address and returns the VerifyResponse, whatever
// its action:
//
//	c, err := api.New("https://api.example.com", api.Secret(key),
//		api.WithTokenLifetime(15*time.Minute), api.WithLogger(log))
//	resp, err := c.Verify(ctx, api.Address{Lines: lines, City: city, Country: "IE"})
//
// A Client is safe for concurrent use; give every worker the same one.
//
// # Tokens
//
// The first Verify fetches a token from {base}/3.0/createtoken with HTTP
// Basic authentication (the key as user name, an empty password). All
// goroutines share that token. When verify answers 401, the token is
// replaced once, however many requests were refused at the same time, and
// each of them retries once with the new one. A 401 to a token created after
// the call began, or a 401 from createtoken, is ErrUnauthorized: the key is
// refused and the run should stop. WithTokenLifetime replaces the token a
// little before a known lifetime instead of waiting for the 401. The client
// never looks at the service's message ids.
//
// # Requests
//
// Verify sends POST by default, with the token and the address form-encoded
// in the body, where proxies do not log it; WithMethod(http.MethodGet) puts
// them in the URL query instead. Empty lines and optional parameters are
// not sent; an address without a non-empty line or a country is not sent at
// all (ErrInvalidAddress). Redirects are not followed by the default HTTP
// client: they mean the base URL is wrong.
//
// # Errors
//
// Classify sorts every error into a Kind:
//
//   - KindPermanent: the address is bad (HTTP 400, 413, 422,
//     ErrInvalidAddress); record it and go on with other rows.
//   - KindRateLimited: HTTP 429, a *RateLimitedError; wait its RetryAfter
//     and try again without counting an attempt.
//   - KindTransient: 5xx, timeouts, dropped connections, truncated or
//     non-JSON answers, anything unrecognised; retry with backoff.
//   - KindFatal: refused credentials (ErrUnauthorized), 403, a wrong base
//     URL (404, 405, a redirect, a createtoken answer without a token), TLS
//     certificate failures, context.Canceled; stop the run.
//
// A non-success answer is a *StatusError carrying the status and the message
// of the service's error envelope. No error text contains the API key or a
// token: messages echoed by the service are scrubbed, and transport errors
// are reported without the request URL that net/http would include.
//
// # Wire types
//
// VerifyResponse and its parts have a field for every member the interface
// names, with its exact JSON name. Members it does not name are kept in
// VerifyResponse.Extra and Data.Extra, so an answer re-encodes without loss;
// unknown members of other objects are ignored. Names match exactly, and an
// answer with a repeated member name is refused. AppendVerifyResponse and
// DecodeVerifyResponse are the encoding of stored answers (journal, cache);
// they use github.com/go-json-experiment/json, the encoding/json/v2 API.
// VerifyAnswer also returns the service's body when it decodes to the
// answer unchanged, so that a caller storing answers need not encode it.
package api
