// Package mailmap maps the names and addresses commits were written under
// to the ones people want to be known by, as git reads a .mailmap file
// (gitmailmap(5)), so that one person who committed as "ada@old.example"
// and "Ada L. <ada@new.example>" is counted once.
package mailmap

import (
	"bytes"
	"fmt"
)

// MaxBytes is the largest mailmap text Add reads: the largest projects'
// .mailmap files are some hundred kilobytes; anything much larger is not a
// mailmap, and would cost memory for every author looked up.
const MaxBytes = 4 << 20

// Map is a parsed mailmap. The zero Map and a nil *Map map nothing.
type Map struct {
	byEmail map[string]*entry // by address, ASCII letters folded
	size    int               // bytes read so far
}

// entry is what git's mailmap_entry holds for one commit address: the
// replacement for any name ("Proper Name <commit@email>" lines) and the
// replacements for particular names ("... Commit Name <commit@email>"
// lines), by name with ASCII letters folded. An empty string is git's
// NULL: nothing to replace.
type entry struct {
	simple replacement
	byName map[string]replacement
}

type replacement struct{ name, email string }

// Parse reads a mailmap's text, as git reads a .mailmap file.
func Parse(data []byte) (*Map, error) {
	m := &Map{}
	if err := m.Add(data); err != nil {
		return nil, err
	}
	return m, nil
}

// Add reads more of a mailmap into m, after what it holds, as git reads
// .mailmap, then mailmap.blob, then mailmap.file into one map: a later
// line about the same address or the same name and address overrides an
// earlier one, field by field for the name-less forms, as in git.
//
// Lines are git's: "#" at their very start makes a comment; a line is
// "Proper Name <commit@email>", "<proper@email> <commit@email>", "Proper
// Name <proper@email> <commit@email>" or "Proper Name <proper@email>
// Commit Name <commit@email>", anything after the last address ignored;
// a line of any other shape is ignored. Names are trimmed of spaces, tabs,
// carriage returns; addresses are taken as written between < and >.
// Addresses and names match without regard to the case of ASCII letters.
// A NUL byte ends its line. (Git cuts a file's lines longer than 1,023
// bytes into pieces, each read as a line; Add reads them whole, as git
// reads a mailmap.blob.)
func (m *Map) Add(data []byte) error {
	if m.size+len(data) > MaxBytes {
		return fmt.Errorf("mailmap of %d bytes is over the %d bytes digest reads. Try: a .mailmap of the entries that matter, or none", m.size+len(data), MaxBytes)
	}
	m.size += len(data)
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		m.addLine(line)
	}
	return nil
}

// addLine is git's read_mailmap_line.
func (m *Map) addLine(line []byte) {
	if len(line) > 0 && line[0] == '#' {
		return
	}
	name1, email1, rest, ok := parseNameAndEmail(line, false)
	if !ok {
		return
	}
	name2, email2, _, second := parseNameAndEmail(rest, true)
	if !second {
		// "Proper Name <commit@email>": its one address is the commit's.
		m.addMapping(name1, "", "", email1)
		return
	}
	m.addMapping(name1, email1, name2, email2)
}

// parseNameAndEmail is git's parse_name_and_email: the name before the
// first "<" (trimmed), the address up to the next ">", and what follows.
// ok is false where git finds no address (or an empty one, unless
// allowEmpty).
func parseNameAndEmail(b []byte, allowEmpty bool) (name, email string, rest []byte, ok bool) {
	left := bytes.IndexByte(b, '<')
	if left < 0 {
		return "", "", nil, false
	}
	right := bytes.IndexByte(b[left+1:], '>')
	if right < 0 {
		return "", "", nil, false
	}
	right += left + 1
	if !allowEmpty && right == left+1 {
		return "", "", nil, false
	}
	name = string(bytes.Trim(b[:left], " \t\n\r"))
	return name, string(b[left+1 : right]), b[right+1:], true
}

// addMapping is git's add_mapping, for a line that names the commit's
// address (oldEmail, perhaps empty: "<>" is an address all the same).
func (m *Map) addMapping(newName, newEmail, oldName, oldEmail string) {
	if m.byEmail == nil {
		m.byEmail = map[string]*entry{}
	}
	key := fold(oldEmail)
	e := m.byEmail[key]
	if e == nil {
		e = &entry{}
		m.byEmail[key] = e
	}
	if oldName == "" {
		if newName != "" {
			e.simple.name = newName
		}
		if newEmail != "" {
			e.simple.email = newEmail
		}
		return
	}
	if e.byName == nil {
		e.byName = map[string]replacement{}
	}
	e.byName[fold(oldName)] = replacement{name: newName, email: newEmail}
}

// Resolve maps a commit's author (or committer) to the name and address
// the mailmap gives, as git's map_user does: the entry for the address and
// this name if there is one, else the entry for the address alone; what
// the entry leaves unsaid is kept. Without an entry it returns its input.
func (m *Map) Resolve(name, email string) (string, string) {
	if m == nil || len(m.byEmail) == 0 {
		return name, email
	}
	e := m.byEmail[fold(email)]
	if e == nil {
		return name, email
	}
	r := e.simple
	if len(e.byName) > 0 {
		if byName, ok := e.byName[fold(name)]; ok {
			r = byName
		}
	}
	if r.email != "" {
		email = r.email
	}
	if r.name != "" {
		name = r.name
	}
	return name, email
}

// Len is how many commit addresses the mailmap maps.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.byEmail)
}

// fold lower-cases ASCII letters only, as git's strcasecmp compares.
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
