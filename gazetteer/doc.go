// Package gazetteer holds reference address data: loading, normalisation, the
// index, matching and scoring. It knows nothing about HTTP.
//
// The reference file format is described in FORMAT.md. Load builds an
// Index; Index.Match takes an address as the verify endpoint received it and
// returns the best reference address with a verdict (Accept, Suggest or
// Confirm), the match level, the standardised address to display and what
// changed element by element.
//
// Matching works on keys: text is folded (case, accents, punctuation),
// street types and unit words are unified (St/Street/Saint, Rd/Road,
// Apt/Apartment/Flat/Unit), "12 A" becomes "12a", ranges ("12-14") stay
// whole, and Eircodes, UK postcodes and Dublin postal districts are
// recognised on any line; "14Elm" is the number 14 and the word "elm",
// "Room 4" a flat and "Block 1" one word; Irish-language towns and
// counties ("Gaillimh", "Co. na Gaillimhe") stand for the English ones,
// and Jersey, Guernsey and the Isle of Man match as the UK, whose
// postcodes they use. Candidates come from blocking tables (the full
// postcode; towns, counties and postcode areas crossed with the rarest
// words) and are scored on IDF-weighted word agreement with typo tolerance,
// house and flat number agreement, postcode, town and county; a street
// type left out or given wrong ("Elm Road" for "Elm Lane") counts half,
// and makes the match a Suggest. A match is confident when its score is
// high and well ahead of the runner-up.
//
// Some input is set aside rather than matched, and the answer is then a
// Suggest: a telephone number, the name of a business park or estate the
// address does not explain, a unit line the address has no unit for.
// "Rm4", "Flt. 2" and "FlatA" are flats; "S." before a name is read as
// Saint (a Suggest, as it may be South). A postcode that names one
// building (an Eircode, or a UK postcode with one property of the street
// whose number is close to the one written) overrules a house number no
// house of the street has, as a Suggest.
package gazetteer
