// Package servicetest gives tests the real service handler with faults
// injected: the one stand-in for a live service that the project's tests
// use. Faults passes each request to the handler unless its Plan (for
// verify) or TokenPlan (for createtoken) picks a fault for it, counts the
// requests, and keeps the tokens the handler issues so that a test can
// look for them where they must not be. A Plan sees each request and may
// hold it, which is how a test lines requests up; a token expires as the
// service expires it, on the clock of a synctest bubble when the service
// is served in process there (service.Transport).
package servicetest
