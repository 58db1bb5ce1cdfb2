// Package redact keeps passwords out of error texts: drivers may quote a
// connection string, password and all, in their errors.
package redact
