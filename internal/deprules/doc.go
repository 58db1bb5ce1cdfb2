// Package deprules has no code of its own: its test pins the import rules
// of the project's packages (issue 22, "Leaves stay leaves"), which the
// compiler cannot see until a cycle forms.
package deprules
