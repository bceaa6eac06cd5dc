package gitobjects

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/digest-cli/digest/internal/offheap"
)

// CommitGraph reads a repository's commit-graph (git's
// objects/info/commit-graph, or the chain under objects/info/commit-graphs):
// each commit's parents, root tree, committer date and topological level,
// by index lookups instead of inflating and parsing the commit. A walk over
// ranges of a long history (git.git's 82,000 commits) spends most of its
// time doing exactly that. The files are mapped, never copied into the heap,
// and only the pages a walk touches are read.
//
// The graph is one layer, or a chain of layers each adding the commits
// written since the one below it. A commit's position counts across the
// chain: the base layer's commits first. Safe for concurrent use.
type CommitGraph struct {
	layers []graphLayer // the base first
	unmaps []func() error
}

type graphLayer struct {
	fanout []byte // 256 big-endian counts
	// hashLen is the object names' length: 20 bytes, or 32 in a SHA-256
	// repository (the header's hash version 2).
	hashLen int
	oids    []byte // sorted, hashLen bytes each
	data    []byte // CDAT: tree, two parents, level and date; hashLen+16 bytes each
	edges   []byte // EDGE: octopus merges' further parents
	below   uint32 // commits in the layers under this one
}

// GraphCommit is what the commit-graph holds of one commit.
type GraphCommit struct {
	Tree ID
	// Parents are positions in the graph, in the commit's order.
	Parents []uint32
	// Time is the committer date in seconds since the epoch, as git's
	// commit->date: the key of git's walk order.
	Time int64
	// Level is the topological level (generation number v1): one more
	// than its parents' highest, so a commit can only reach commits of a
	// lower level. 0 when the file does not know it.
	Level uint32
}

// MaxGraphLevel is the highest level git stores; a commit at it may have
// ancestors at it too, so it orders nothing.
const MaxGraphLevel = 1<<30 - 1

const (
	graphNoParent   = 0x70000000
	graphEdgeMarker = 0x80000000
	graphLastEdge   = 0x80000000
	// maxGraphLayers bounds a chain; git's own chains merge long before.
	maxGraphLayers = 1000
)

var errBadGraph = errors.New("malformed commit-graph")

// OpenCommitGraph opens the commit-graph of an objects directory, the
// single file first and else the chain, as git looks for them. Without
// either, the error wraps fs.ErrNotExist.
func OpenCommitGraph(objectsDir string) (*CommitGraph, error) {
	info := filepath.Join(objectsDir, "info")
	single := filepath.Join(info, "commit-graph")
	if _, err := os.Stat(single); err == nil {
		return openGraphFiles([]string{single}, nil)
	}
	chainPath := filepath.Join(info, "commit-graphs", "commit-graph-chain")
	chain, err := os.ReadFile(chainPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no commit-graph: %w", objectsDir, fs.ErrNotExist)
		}
		return nil, err
	}
	var paths []string
	var hashes [][]byte
	sc := bufio.NewScanner(bytes.NewReader(chain))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		h, ok := parseHex(line)
		if !ok {
			return nil, fmt.Errorf("%s: %q is not a commit-graph's hash: %w", chainPath, line, errBadGraph)
		}
		hashes = append(hashes, h)
		paths = append(paths, filepath.Join(info, "commit-graphs", "graph-"+line+".graph"))
	}
	if len(paths) == 0 || len(paths) > maxGraphLayers {
		return nil, fmt.Errorf("%s: %d layers: %w", chainPath, len(paths), errBadGraph)
	}
	return openGraphFiles(paths, hashes)
}

func parseHex(s string) ([]byte, bool) {
	if len(s) != 2*SHA1Size && len(s) != 2*SHA256Size {
		return nil, false
	}
	h, err := hex.DecodeString(s)
	return h, err == nil
}

func openGraphFiles(paths []string, hashes [][]byte) (*CommitGraph, error) {
	g := &CommitGraph{}
	files := make([][]byte, 0, len(paths))
	for _, p := range paths {
		data, unmap, err := offheap.MapFile(p)
		if err != nil {
			g.Close()
			return nil, err
		}
		g.unmaps = append(g.unmaps, unmap)
		files = append(files, data)
	}
	if err := g.parse(files, hashes); err != nil {
		g.Close()
		return nil, fmt.Errorf("%s: %w", paths[len(paths)-1], err)
	}
	return g, nil
}

// ParseCommitGraph reads commit-graph files held in memory: one file, or a
// chain's files base first. The files must outlive the graph.
func ParseCommitGraph(files ...[]byte) (*CommitGraph, error) {
	g := &CommitGraph{}
	if err := g.parse(files, nil); err != nil {
		return nil, err
	}
	return g, nil
}

// parse checks every layer's header and chunk table, that each layer names
// the layers below it (in its BASE chunk), and that the files are those the
// chain names when hashes are given: a chain rewritten under a reader must
// not pair a layer with another's base.
func (g *CommitGraph) parse(files [][]byte, hashes [][]byte) error {
	if len(files) == 0 || len(files) > maxGraphLayers {
		return errBadGraph
	}
	var below uint64
	for i, f := range files {
		l, bases, err := parseGraphLayer(f, i)
		if err != nil {
			return err
		}
		if i > 0 && l.hashLen != g.layers[0].hashLen {
			return fmt.Errorf("layer %d is of another hash version than layer 0: %w", i, errBadGraph)
		}
		// A layer names the layers below by their checksums, their trailers.
		for j := range i {
			if !bytes.Equal(bases[j*l.hashLen:(j+1)*l.hashLen], trailer(files[j], l.hashLen)) {
				return fmt.Errorf("layer %d does not name layer %d as its base: %w", i, j, errBadGraph)
			}
		}
		if hashes != nil && !bytes.Equal(trailer(f, l.hashLen), hashes[i]) {
			return fmt.Errorf("layer %d is not the file the chain names: %w", i, errBadGraph)
		}
		l.below = uint32(below)
		below += uint64(len(l.oids) / l.hashLen)
		if below >= graphNoParent { // positions must stay clear of the markers
			return fmt.Errorf("too many commits: %w", errBadGraph)
		}
		g.layers = append(g.layers, l)
	}
	return nil
}

// trailer is a parsed file's checksum, which names it in a chain.
func trailer(f []byte, hashLen int) []byte { return f[len(f)-hashLen:] }

// parseGraphLayer reads one file's header and chunk table; layer is its
// place in the chain, which its header must state. It returns the BASE
// chunk too.
func parseGraphLayer(f []byte, layer int) (graphLayer, []byte, error) {
	const headerLen, entryLen = 8, 12
	if len(f) < headerLen+entryLen+SHA256Size || string(f[:4]) != "CGPH" {
		return graphLayer{}, nil, errBadGraph
	}
	if f[4] != 1 {
		return graphLayer{}, nil, fmt.Errorf("commit-graph version %d is not supported", f[4])
	}
	var graphHashLen int
	switch f[5] {
	case 1:
		graphHashLen = SHA1Size
	case 2:
		graphHashLen = SHA256Size
	default:
		return graphLayer{}, nil, fmt.Errorf("commit-graph of hash version %d, neither SHA-1 nor SHA-256", f[5])
	}
	graphDataLen := graphHashLen + 16
	chunks, bases := int(f[6]), int(f[7])
	if bases != layer {
		return graphLayer{}, nil, fmt.Errorf("a layer with %d bases at place %d of its chain: %w", bases, layer, errBadGraph)
	}
	tableEnd := headerLen + (chunks+1)*entryLen
	end := uint64(len(f) - graphHashLen) // the trailer: the file's checksum
	if uint64(tableEnd) > end {
		return graphLayer{}, nil, errBadGraph
	}
	found := map[string][]byte{}
	for i := range chunks {
		e := f[headerLen+i*entryLen:]
		id := string(e[:4])
		start := binary.BigEndian.Uint64(e[4:12])
		stop := binary.BigEndian.Uint64(e[16:24]) // the next entry's offset
		if id == "\x00\x00\x00\x00" || start < uint64(tableEnd) || stop < start || stop > end {
			return graphLayer{}, nil, errBadGraph
		}
		if _, dup := found[id]; dup {
			return graphLayer{}, nil, errBadGraph
		}
		found[id] = f[start:stop]
	}
	if last := f[headerLen+chunks*entryLen:]; string(last[:4]) != "\x00\x00\x00\x00" {
		return graphLayer{}, nil, errBadGraph
	}
	l := graphLayer{hashLen: graphHashLen, fanout: found["OIDF"], oids: found["OIDL"], data: found["CDAT"], edges: found["EDGE"]}
	if len(l.fanout) != 256*4 {
		return graphLayer{}, nil, errBadGraph
	}
	var prev uint32
	for i := range 256 {
		n := binary.BigEndian.Uint32(l.fanout[i*4:])
		if n < prev {
			return graphLayer{}, nil, errBadGraph
		}
		prev = n
	}
	n := uint64(prev)
	if uint64(len(l.oids)) != n*uint64(graphHashLen) || uint64(len(l.data)) != n*uint64(graphDataLen) || len(l.edges)%4 != 0 {
		return graphLayer{}, nil, errBadGraph
	}
	base := found["BASE"]
	if len(base) != bases*graphHashLen {
		return graphLayer{}, nil, errBadGraph
	}
	return l, base, nil
}

// Close unmaps the files.
func (g *CommitGraph) Close() error {
	var errs []error
	for _, unmap := range g.unmaps {
		errs = append(errs, unmap())
	}
	g.unmaps = nil
	return errors.Join(errs...)
}

// Len is the number of commits in the graph.
func (g *CommitGraph) Len() uint32 {
	last := g.layers[len(g.layers)-1]
	return last.below + uint32(len(last.oids)/last.hashLen)
}

// Find returns the position of commit h, or false when the graph does not
// hold it: written before the commit was, or never a commit.
func (g *CommitGraph) Find(h ID) (uint32, bool) {
	// The newest layer first: recent commits are the ones walks start at.
	for i := len(g.layers) - 1; i >= 0; i-- {
		l := &g.layers[i]
		name := h.Bytes()
		if len(name) != l.hashLen {
			return 0, false
		}
		lo := uint32(0)
		if name[0] > 0 {
			lo = binary.BigEndian.Uint32(l.fanout[(int(name[0])-1)*4:])
		}
		hi := binary.BigEndian.Uint32(l.fanout[int(name[0])*4:])
		n := uint32(l.hashLen)
		for lo < hi {
			mid := lo + (hi-lo)/2
			switch c := bytes.Compare(l.oids[mid*n:(mid+1)*n], name); {
			case c == 0:
				return l.below + mid, true
			case c < 0:
				lo = mid + 1
			default:
				hi = mid
			}
		}
	}
	return 0, false
}

// layerOf finds the layer holding position pos and pos within it.
func (g *CommitGraph) layerOf(pos uint32) (*graphLayer, uint32, bool) {
	for i := len(g.layers) - 1; i >= 0; i-- {
		l := &g.layers[i]
		if pos >= l.below {
			local := pos - l.below
			return l, local, local < uint32(len(l.oids)/l.hashLen)
		}
	}
	return nil, 0, false
}

// Hash returns the commit at position pos.
func (g *CommitGraph) Hash(pos uint32) (ID, error) {
	l, local, ok := g.layerOf(pos)
	if !ok {
		return ID{}, fmt.Errorf("commit-graph position %d of %d: %w", pos, g.Len(), errBadGraph)
	}
	n := uint32(l.hashLen)
	return IDFromBytes(l.oids[local*n : (local+1)*n]), nil
}

// Commit reads the commit at position pos, its parents appended to
// parents[:0] (pass a buffer to reuse). A parent a layer could not name (a
// position at or above its own layer's end) is damage, reported as an error.
func (g *CommitGraph) Commit(pos uint32, parents []uint32) (GraphCommit, error) {
	l, local, ok := g.layerOf(pos)
	if !ok {
		return GraphCommit{}, fmt.Errorf("commit-graph position %d of %d: %w", pos, g.Len(), errBadGraph)
	}
	graphHashLen := uint32(l.hashLen)
	graphDataLen := graphHashLen + 16
	limit := l.below + uint32(len(l.oids))/graphHashLen
	d := l.data[local*graphDataLen : (local+1)*graphDataLen]
	c := GraphCommit{Parents: parents[:0], Tree: IDFromBytes(d[:graphHashLen])}
	levelAndHigh := binary.BigEndian.Uint32(d[graphHashLen+8:])
	c.Level = levelAndHigh >> 2
	c.Time = int64(levelAndHigh&3)<<32 | int64(binary.BigEndian.Uint32(d[graphHashLen+12:]))
	bad := func() (GraphCommit, error) {
		return GraphCommit{}, fmt.Errorf("commit-graph position %d: parent out of range: %w", pos, errBadGraph)
	}
	first := binary.BigEndian.Uint32(d[graphHashLen:])
	if first == graphNoParent {
		return c, nil
	}
	if first >= limit {
		return bad()
	}
	c.Parents = append(c.Parents, first)
	second := binary.BigEndian.Uint32(d[graphHashLen+4:])
	switch {
	case second == graphNoParent:
	case second&graphEdgeMarker == 0:
		if second >= limit {
			return bad()
		}
		c.Parents = append(c.Parents, second)
	default:
		// An octopus: its further parents run in the edge list from here to
		// the entry marked last.
		for i := int(second &^ graphEdgeMarker); ; i++ {
			if (i+1)*4 > len(l.edges) {
				return bad()
			}
			e := binary.BigEndian.Uint32(l.edges[i*4:])
			p := e &^ graphLastEdge
			if p >= limit {
				return bad()
			}
			c.Parents = append(c.Parents, p)
			if e&graphLastEdge != 0 {
				break
			}
		}
	}
	return c, nil
}
