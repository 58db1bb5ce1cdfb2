package api

import "encoding/json"

// Address is one address to verify: the parameters of a verify request.
// The postcode has no parameter of its own in the interface; callers send it
// as the last entry of Lines.
type Address struct {
	Lines    []string // addressLine, one per entry, in order; at least one is required
	City     string   // city; optional
	Region   string   // region (state, county, province); optional
	Country  string   // country as an ISO code or a name; required
	Language string   // language to search in; optional
}

// TokenResponse is the body of a createtoken answer (interface section 2.1).
type TokenResponse struct {
	Token         string `json:"token"`
	Type          string `json:"type"`
	TransactionID string `json:"transactionId"`
}

// Action is the recommended action of a verify answer.
type Action string

// The four actions of the interface (section 4.2).
const (
	ActionAccept  Action = "Accept"
	ActionSuggest Action = "Suggest"
	ActionConfirm Action = "Confirm"
	ActionReject  Action = "Reject"
)

// Values of form.message.severity, information.matchLevel, information.status
// and information.details members, as decided in DESIGN.md.
const (
	SeverityInformation = "Information"
	SeverityWarning     = "Warning"
	SeverityError       = "Error"

	LevelBuilding    = "Building"
	LevelSubBuilding = "SubBuilding"
	LevelStreet      = "Street"
	LevelLocality    = "Locality"
	LevelRegion      = "Region"
	LevelNone        = "None"

	StatusVerified   = "Verified"
	StatusCorrected  = "Corrected"
	StatusPartial    = "Partial"
	StatusUnverified = "Unverified"

	DetailNone      = "None"
	DetailUnchanged = "Unchanged"
	DetailChanged   = "Changed"
	DetailAdded     = "Added"
	DetailIgnored   = "Ignored"
)

// VerifyResponse is the body of a verify answer (interface section 2.2).
// Members the interface does not name are kept in Extra so that a response
// re-encodes without loss. Member names match exactly (not ignoring case,
// as encoding/json did): "Action" is an unknown member.
type VerifyResponse struct {
	Type        string         `json:"type"`
	Action      Action         `json:"action"`
	Form        Form           `json:"form"`
	Information Information    `json:"information"`
	Input       InputAddress   `json:"input"`
	Address     MatchedAddress `json:"address"`
	Data        Data           `json:"data"`
	Links       []Link         `json:"links"`

	Extra map[string]json.RawMessage `json:",embed"`
}

// Form carries the message of a verify answer or of an error (section 2.3).
type Form struct {
	Language string  `json:"language"`
	Message  Message `json:"message"`
}

// Message is form.message: an id, a severity and a text for the user.
type Message struct {
	ID       int    `json:"id"`
	Severity string `json:"severity"`
	Value    string `json:"value"`
}

// Information summarises the match (section 2.4).
type Information struct {
	Status              string  `json:"status"`
	MatchLevel          string  `json:"matchLevel"`
	Complete            bool    `json:"complete"`
	SubBuilding         string  `json:"subBuilding"`
	AddressLinesAmended bool    `json:"addressLinesAmended"`
	CityAmended         bool    `json:"cityAmended"`
	RegionAmended       bool    `json:"regionAmended"`
	PostcodeAmended     bool    `json:"postcodeAmended"`
	Details             Details `json:"details"`
}

// Details tells per address element whether it was changed, added or left
// unchanged; values are the Detail constants.
type Details struct {
	Organization      string `json:"organization"`
	Street            string `json:"street"`
	AddressLines      string `json:"addressLines"`
	SubBuildingNumber string `json:"subBuildingNumber"`
	BuildingNumber    string `json:"buildingNumber"`
	City              string `json:"city"`
	Region            string `json:"region"`
	Postcode          string `json:"postcode"`
}

// Line is one address line; Key is AddressLine1, AddressLine2 ...
type Line struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Value is an object holding a single string value.
type Value struct {
	Value string `json:"value"`
}

// Country is a country with its name, language and ISO code.
type Country struct {
	Language string `json:"language"`
	Value    string `json:"value"`
	ISO      string `json:"iso"`
}

// InputAddress is the address exactly as sent (section 2.5).
type InputAddress struct {
	Lines    []Line   `json:"lines"`
	City     Value    `json:"city"`
	Region   Value    `json:"region"`
	Postcode Value    `json:"postcode"`
	Country  Country  `json:"country"`
	Label    []string `json:"label"`
}

// MatchedAddress is the matched or standardised address (section 2.6).
// Lines, City, Region, Postcode and Country are present according to the form
// settings of the integration, so they may be absent (nil).
type MatchedAddress struct {
	ID         string   `json:"id,omitempty"`
	Language   string   `json:"language,omitempty"`
	Charset    string   `json:"charset,omitempty"`
	Variation  string   `json:"variation,omitempty"`
	Lines      []Line   `json:"lines,omitempty"`
	City       *Value   `json:"city,omitempty"`
	Region     *Value   `json:"region,omitempty"`
	Postcode   *Value   `json:"postcode,omitempty"`
	Country    *Country `json:"country,omitempty"`
	Label      []string `json:"label"`
	Highlights [][]int  `json:"highlights"`
}

// Data holds additional data (section 2.7). Only location is named by the
// interface; other members are kept in Extra.
type Data struct {
	Location *Location `json:"location,omitempty"`

	Extra map[string]json.RawMessage `json:",embed"`
}

// Location is data.location. A nil *Location means the answer had none.
type Location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	CRS       string  `json:"crs"`
	Accuracy  string  `json:"accuracy"`
}

// Link is one related resource (section 2.8).
type Link struct {
	Rel   string `json:"rel"`
	Href  string `json:"href"`
	Title string `json:"title"`
}
