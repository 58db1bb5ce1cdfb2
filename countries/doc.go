// Package countries names countries: ISO 3166-1 codes from the names,
// codes and variants people write, and English names from codes. It
// imports no other package of the project, so that readers can resolve a
// country cell without loading the gazetteer; x/text's normalisation,
// which folds accents, is linked by excelize anyway.
package countries
