package gazetteer

// AddressType is the kind of a reference address.
type AddressType string

// Address types of the reference format.
const (
	Residential AddressType = "Residential"
	Commercial  AddressType = "Commercial"
	POBox       AddressType = "POBox"
)

// Record is one reference address, as loaded from the reference CSV.
type Record struct {
	ID             string
	Organisation   string
	SubBuilding    string
	BuildingName   string
	BuildingNumber string
	Street         string
	Locality       string
	City           string
	Region         string
	Postcode       string
	Country        string // ISO alpha-2
	Latitude       float64
	Longitude      float64
	HasLocation    bool
	Type           AddressType

	// The fields below come from Royal Mail PAF, whose addresses need
	// them; most references leave them empty.

	// BuildingID is the id the record shares with the other sub-units of
	// its building (PAF's UDPRN when ID is the UMPRN of a room); it need
	// not be unique.
	BuildingID string
	// Department is a department of the organisation.
	Department string
	// DependentStreet is a street that the house number belongs to and
	// that lies off Street (PAF's dependent thoroughfare).
	DependentStreet string
	// DoubleDependentLocality is a smaller place within Locality.
	DoubleDependentLocality string
	// POBox is the number of a PO Box ("1234"), printed as "PO Box 1234".
	POBox string
}

// Query is an address to match, as the verify endpoint received it.
type Query struct {
	Lines    []string
	City     string
	Region   string
	Country  string // ISO alpha-2 (the service resolves names first)
	Language string
}

// Level is the granularity of a match; the values are the interface's
// information.matchLevel values.
type Level string

// Match levels, finest first.
const (
	LevelBuilding    Level = "Building"
	LevelSubBuilding Level = "SubBuilding"
	LevelStreet      Level = "Street"
	LevelLocality    Level = "Locality"
	LevelRegion      Level = "Region"
	LevelNone        Level = "None"
)

// Change tells what matching did to one element; the values are the
// interface's information.details values.
type Change string

// Element changes.
const (
	ChangeNone      Change = "None"
	ChangeUnchanged Change = "Unchanged"
	ChangeChanged   Change = "Changed"
	ChangeAdded     Change = "Added"
	ChangeIgnored   Change = "Ignored"
)

// Verdict is the outcome of matching before integration rules (the service
// turns a permitted verdict into Accept/Suggest/Confirm and applies Reject).
type Verdict string

// Verdicts.
const (
	// VerdictAccept: confident building-level match, cosmetic changes only.
	VerdictAccept Verdict = "Accept"
	// VerdictSuggest: confident match with a real change.
	VerdictSuggest Verdict = "Suggest"
	// VerdictConfirm: partial, ambiguous or no match.
	VerdictConfirm Verdict = "Confirm"
)

// Details is the per-element change of a match (information.details).
type Details struct {
	Organization      Change
	Street            Change
	AddressLines      Change
	SubBuildingNumber Change
	BuildingNumber    Change
	City              Change
	Region            Change
	Postcode          Change
}

// Match is the result of matching one Query.
type Match struct {
	Verdict Verdict
	Level   Level
	// Record is the matched reference address when a building (or
	// sub-building) was matched; nil otherwise.
	Record *Record
	// Lines, City, Region, Postcode and Country (ISO) are the matched or
	// standardised address at the granularity of Level: for a street-level
	// match the street and the town, for no match the input tidied up.
	Lines    []string
	City     string
	Region   string
	Postcode string
	Country  string
	// Location is the point for the match level (building, street centroid,
	// locality centroid), or nil.
	Location *Point
	// Details and the amended flags describe what changed versus the input.
	// The flags follow the details: an element is amended exactly when its
	// details are Changed or Added (AddressLinesAmended follows
	// Details.AddressLines). Differences of form only (case, spacing,
	// punctuation, "Co.", abbreviations) are Unchanged and not amended.
	Details             Details
	AddressLinesAmended bool
	CityAmended         bool
	RegionAmended       bool
	PostcodeAmended     bool
	// Tidied is true when the returned text differs from the input at all,
	// even only in form: an Accept that is Tidied says "formatting
	// corrected".
	Tidied bool
	// UnusedInput is true when the input has words the matched address does
	// not explain (a line that is neither address nor a recognised contact
	// line such as "c/o ...", which is set aside as cosmetic): a real
	// change, never accepted.
	UnusedInput bool
	// POBox is true when the input itself names a PO Box ("PO Box 12"),
	// whether or not a PO Box record was matched.
	POBox bool
	// Ambiguous is true when the runner-up was too close to the best
	// candidate to choose.
	Ambiguous bool
	// Score and RunnerUp are the best and second-best candidate scores in
	// [0,1], for diagnostics and evaluation.
	Score    float64
	RunnerUp float64
}

// Point is a WGS84 coordinate.
type Point struct {
	Latitude  float64
	Longitude float64
}
