package service

import (
	"log"
	"strings"

	"github.com/rs/zerolog"
)

// newStdLog routes net/http's own messages (TLS handshake errors, panics it
// caught) to the zerolog logger at warn level.
func newStdLog(l zerolog.Logger) *log.Logger {
	return log.New(stdWriter{l}, "", 0)
}

type stdWriter struct{ l zerolog.Logger }

func (w stdWriter) Write(p []byte) (int, error) {
	w.l.Warn().Str("source", "net/http").Msg(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
