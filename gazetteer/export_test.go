package gazetteer

// UpdateGolden lets the external tests share the -update flag.
func UpdateGolden() bool { return *update }
