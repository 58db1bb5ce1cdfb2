// Package cliflag is how addrclean's commands read and show their flags,
// on top of the standard flag package: flags may follow positional
// arguments ("run in.csv -o out.csv"), are shown as they are typed
// ("--name", "-o, --out PATH"), and a mistyped flag or command gets the
// nearest real one ("did you mean --country?").
//
// It knows nothing of addrclean's commands: the help prose and the exit
// codes stay in cmd/addrclean.
package cliflag
