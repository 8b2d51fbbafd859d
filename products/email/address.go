package email

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Limits of an address (RFC 5321 section 4.5.3.1) and of a display name.
const (
	maxAddressLen   = 254
	maxLocalPartLen = 64
	maxNameLen      = 256
	// maxHeaderLine is RFC 5322's line limit: an address header must fit one line, since
	// go-mail does not fold address headers.
	maxHeaderLine = 998
)

// idnaProfile checks a domain as DNS will see it and gives its A-label (punycode) form.
var idnaProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.VerifyDNSLength(true), idna.Transitional(false))

// AddressProblem is why an address cannot be sent: which part (email or name) and what.
type AddressProblem struct {
	Part    string // "email" or "name"
	Problem string
}

// Error implements error.
func (p *AddressProblem) Error() string { return "email: address " + p.Part + ": " + p.Problem }

// encodeAddress turns an address object into the header address every transport writes, or
// says why it cannot be written. It is the only path from a stored address to a header: the
// send checks an address with it (so what is accepted can be encoded) and Compose writes
// what it returns. The email must be one bare addr-spec with an ASCII local part (the sender
// does not use SMTPUTF8, so a non-ASCII local part could not be delivered); an
// internationalized domain is sent as its A-labels. The name must be valid UTF-8 without
// control characters; it is RFC 2047-encoded when not plain ASCII. The header must read back
// as the same name and address.
func encodeAddress(a Address) (*mail.Address, *AddressProblem) {
	bad := func(part, problem string) (*mail.Address, *AddressProblem) {
		return nil, &AddressProblem{Part: part, Problem: problem}
	}
	email := a.Email
	switch {
	case email == "":
		return bad("email", "required")
	case !utf8.ValidString(email):
		return bad("email", "must be valid UTF-8")
	case len(email) > maxAddressLen:
		return bad("email", fmt.Sprintf("must be at most %d bytes", maxAddressLen))
	case strings.IndexFunc(email, unicode.IsControl) >= 0:
		return bad("email", "must not contain control characters")
	}
	p, err := mail.ParseAddress(email)
	if err != nil || p.Address != email || p.Name != "" {
		return bad("email", "must be an email address (local@domain, no name or brackets)")
	}
	at := strings.LastIndexByte(email, '@')
	local, domain := email[:at], email[at+1:]
	switch {
	case !isASCII(local):
		return bad("email", "the part before @ must be ASCII: non-ASCII local parts need SMTPUTF8, which the sender does not use")
	case len(local) > maxLocalPartLen:
		return bad("email", fmt.Sprintf("the part before @ must be at most %d bytes", maxLocalPartLen))
	case strings.HasPrefix(domain, "["):
		return bad("email", "address literals (user@[ip]) are not sent")
	}
	ascii, err := idnaProfile.ToASCII(domain)
	if err != nil || ascii == "" {
		return bad("email", "the domain is not a valid domain name")
	}
	if isASCII(domain) {
		ascii = domain // keep the caller's spelling of an ASCII domain
	}
	name := a.Name
	switch {
	case !utf8.ValidString(name):
		return bad("name", "must be valid UTF-8")
	case len(name) > maxNameLen:
		return bad("name", fmt.Sprintf("must be at most %d bytes", maxNameLen))
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) >= 0:
		return bad("name", "must be one line without control characters")
	}
	out := &mail.Address{Name: name, Address: local + "@" + ascii}
	header := out.String()
	if len(header) > maxHeaderLine {
		return bad("name", "too long once encoded for the header")
	}
	back, err := mail.ParseAddress(header)
	if err != nil || back.Address != out.Address || back.Name != name {
		return bad("name", "cannot be encoded in a header so that it reads back the same")
	}
	return out, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
