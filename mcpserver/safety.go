package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir"
)

// checkOrigin refuses, with 403 Forbidden, a request whose Origin header is
// present and is not the server's own origin (the scheme, and the Host the
// request was sent to or a name of the address it came in on: sameOrigin). The MCP specification requires it of streamable
// HTTP servers: without it, a web page the user visits could drive the
// endpoint from the browser. Requests without Origin (command-line clients,
// SDKs, proxies such as MCP Inspector's) pass, as do same-origin ones.
func checkOrigin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origins := r.Header.Values("Origin")
		if len(origins) == 0 {
			h.ServeHTTP(w, r)
			return
		}
		if len(origins) != 1 || !sameOrigin(origins[0], r) {
			http.Error(w, "Forbidden: the Origin header "+strings.Join(origins, ", ")+" is not this server's origin; memdir's MCP endpoint does not serve other web sites", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether origin is the server's own: the scheme, and
// either the Host r was sent to or a name of the address r came in on
// (see ownAddress), so that a page of http://localhost:P may call a
// server it reaches as 127.0.0.1:P, and the other way round.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return false // includes "null", sent by sandboxed and file: pages
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if !strings.EqualFold(u.Scheme, scheme) {
		return false
	}
	return strings.EqualFold(withPort(u.Host, scheme), withPort(r.Host, scheme)) || ownAddress(withPort(u.Host, scheme), r)
}

// ownAddress reports whether hostport names the local address r came in
// on (the address the server listens on): the same IP and port, or, when
// that is a loopback address, localhost, 127.0.0.1 or ::1 with its port,
// the names the UI accepts for a loopback server too. Other loopback
// addresses (127.0.0.2) may be another server's.
func ownAddress(hostport string, r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	lhost, lport, err := net.SplitHostPort(local.String())
	if err != nil {
		return false
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || port != lport {
		return false
	}
	lip, ip := net.ParseIP(lhost), net.ParseIP(host)
	if lip == nil {
		return false
	}
	if ip != nil && ip.Equal(lip) && !ip.IsUnspecified() {
		return true
	}
	return lip.IsLoopback() && (strings.EqualFold(host, "localhost") || ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback)))
}

// withPort adds scheme's default port to host when it has none.
func withPort(host, scheme string) string {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") || !strings.Contains(host, ":") {
		if scheme == "https" {
			return host + ":443"
		}
		return host + ":80"
	}
	return host
}

// plainTypes rewrites the optional properties of an inferred input schema
// that the schema package declares nullable (type ["null", T], for pointer
// and slice fields) to the plain type T. Some clients (MCP Inspector 0.15)
// cannot fill in a union type and send such values as strings, which then
// fail validation; leaving the key out is how a caller says "none", and the
// handlers treat an absent key as null.
func plainTypes(sch *jsonschema.Schema) *jsonschema.Schema {
	for _, p := range sch.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	return sch
}

// forModel wraps a tool handler so that the text of its errors, which the
// model reads as the tool's result, carries no Go sentinel text such as a
// trailing ": invalid". Callers of the Go API still see the whole chain.
func forModel[In, Out any](h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		res, out, err := h(ctx, req, in)
		if err != nil {
			err = &modelError{msg: modelText(err), err: err}
		}
		return res, out, err
	}
}

// modelError is an error whose text is meant for a model.
type modelError struct {
	msg string
	err error
}

func (e *modelError) Error() string { return e.msg }
func (e *modelError) Unwrap() error { return e.err }

// sentinels are the texts of memdir's sentinel errors that read as Go
// plumbing rather than English when they end a message ("...: invalid").
var sentinels = []error{memdir.ErrInvalid}

// modelText returns err's message as a model should read it: the same text
// with the sentinels memdir wraps for callers to branch on (ErrInvalid's
// ": invalid") left out where they end a clause. Tool results and resource
// errors use it.
func modelText(err error) string {
	msg := err.Error()
	for _, s := range sentinels {
		if !errors.Is(err, s) {
			continue
		}
		tail := ": " + s.Error()
		var b strings.Builder
		for {
			i := strings.Index(msg, tail)
			if i < 0 {
				b.WriteString(msg)
				break
			}
			rest := msg[i+len(tail):]
			b.WriteString(msg[:i])
			if rest != "" && !strings.ContainsAny(rest[:1], ";,.)") && !strings.HasPrefix(rest, " (") {
				b.WriteString(tail) // part of a sentence: "...: invalid UTF-8"
			}
			msg = rest
		}
		msg = b.String()
	}
	return msg
}

// dropNullArguments is receiving middleware that removes the arguments of a
// tool call whose value is JSON null, so that a client sending null for an
// optional parameter (view_range, insert_line, recent_tools, ...) is treated
// as leaving it out, which is what the plain-typed schemas ask for.
func dropNullArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil && len(r.Params.Arguments) > 0 {
			var args map[string]json.RawMessage
			if json.Unmarshal(r.Params.Arguments, &args) == nil {
				dropped := false
				for k, v := range args {
					if string(bytes.TrimSpace(v)) == "null" {
						delete(args, k)
						dropped = true
					}
				}
				if dropped {
					if data, err := json.Marshal(args); err == nil {
						r.Params.Arguments = data
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}
