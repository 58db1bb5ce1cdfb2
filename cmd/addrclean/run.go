package main

import (
	"context"
	"errors"
)

// cmdRun is not built yet.
func cmdRun(ctx context.Context, args []string, s streams) error {
	return withCode(exitFatal, errors.New("'addrclean run' is not built yet"))
}
