package journal

import "github.com/addrclean/addrclean/api"

// appendResponse and decodeResponse store answers losslessly (members the
// interface does not name included) with the api package's own codec, the
// one the service writes answers with.
func appendResponse(b []byte, r *api.VerifyResponse) []byte { return api.AppendVerifyResponse(b, r) }

func decodeResponse(b []byte) (*api.VerifyResponse, error) { return api.DecodeVerifyResponse(b) }
