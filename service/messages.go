package service

import "github.com/addrclean/addrclean/api"

// Message ids of verify results and of errors; MESSAGES.md documents them.
// They are stable: clients of this service may show them, but the api
// client never branches on them (the live service has its own).
const (
	// Results (HTTP 200, type "verify").
	MsgVerified        = 1000 // Accept, no change
	MsgVerifiedTidied  = 1001 // Accept, cosmetic changes only
	MsgCorrected       = 1100 // Suggest
	MsgPartialStreet   = 1200 // Confirm, matched to the street
	MsgPartialLocality = 1201 // Confirm, matched to the town or locality
	MsgPartialRegion   = 1202 // Confirm, matched to the region
	MsgAmbiguous       = 1203 // Confirm, several candidates too close to choose
	MsgNotFound        = 1204 // Confirm, no match
	MsgPartialBuilding = 1205 // Confirm, building matched with low confidence (reserved: the bundled gazetteer never answers so)
	MsgRejectCountry   = 1300 // Reject, outside the allowed countries
	MsgRejectPOBox     = 1301 // Reject, PO Box where PO Boxes are disabled

	// Errors (type "error").
	MsgMissingAddressLine = 4000 // 400
	MsgMissingCountry     = 4001 // 400
	MsgUnknownCountry     = 4002 // 400
	MsgInvalidParameter   = 4003 // 400
	MsgUnsupportedBody    = 4004 // 400
	MsgMissingToken       = 4010 // 401
	MsgInvalidToken       = 4011 // 401
	MsgExpiredToken       = 4012 // 401
	MsgMissingAPIKey      = 4013 // 401
	MsgUnknownAPIKey      = 4014 // 401
	MsgNotFoundPath       = 4040 // 404
	MsgMethodNotAllowed   = 4050 // 405
	MsgTooLarge           = 4130 // 413
	MsgRateLimited        = 4290 // 429
	MsgInternal           = 5000 // 500
)

// errorBody is the envelope of every error answer.
type errorBody struct {
	Type string   `json:"type"`
	Form api.Form `json:"form"`
}

// apiError is an error answer: an HTTP status and its message.
type apiError struct {
	status int
	id     int
	text   string
}

func (e *apiError) Error() string { return e.text }

// Errors with a fixed text.
var (
	errMissingAddressLine = &apiError{400, MsgMissingAddressLine, "At least one addressLine is required."}
	errMissingCountry     = &apiError{400, MsgMissingCountry, "The country parameter is required."}
	errUnknownCountry     = &apiError{400, MsgUnknownCountry, "The country is not a recognised ISO code or country name."}
	errUnsupportedBody    = &apiError{400, MsgUnsupportedBody, "The request body must be form-encoded (application/x-www-form-urlencoded)."}
	errMissingToken       = &apiError{401, MsgMissingToken, "The token parameter is required."}
	errInvalidToken       = &apiError{401, MsgInvalidToken, "The token is not valid."}
	errExpiredToken       = &apiError{401, MsgExpiredToken, "The token has expired: create a new one."}
	errMissingAPIKey      = &apiError{401, MsgMissingAPIKey, "HTTP Basic authentication with the API key as user name is required."}
	errUnknownAPIKey      = &apiError{401, MsgUnknownAPIKey, "The API key is not valid."}
	errNotFound           = &apiError{404, MsgNotFoundPath, "No such resource."}
	errMethodNotAllowed   = &apiError{405, MsgMethodNotAllowed, "Method not allowed."}
	errTooLarge           = &apiError{413, MsgTooLarge, "The request is too large."}
	errRateLimited        = &apiError{429, MsgRateLimited, "Too many requests for this API key: retry later."}
	errInternal           = &apiError{500, MsgInternal, "Internal error."}
)

// invalidParam is a 400 for a malformed parameter; the text names the
// parameter, never its value (a value could be a token).
func invalidParam(text string) *apiError {
	return &apiError{400, MsgInvalidParameter, text}
}
