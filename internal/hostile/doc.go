// Package hostile makes the shapes of hostile input that tests feed to
// loaders: words of random letters and streams far larger than memory,
// generated as they are read.
package hostile
