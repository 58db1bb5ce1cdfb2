// Package servicetest gives tests the real service handler with faults
// injected: the one stand-in for a live service that the project's tests
// use. Faults passes each request to the handler unless its Plan picks a
// fault for it, counts the requests, and keeps the tokens the handler
// issues so that a test can look for them where they must not be.
package servicetest
