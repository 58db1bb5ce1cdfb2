// Package api is the client side of the address-verification interface: the
// wire types of the token and verify responses, a Client with a shared,
// single-flight token source, and typed errors a caller can branch on.
//
// It knows nothing about files or rows.
package api
