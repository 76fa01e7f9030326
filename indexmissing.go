package memdir

import "strings"

// IndexMissing adds a MEMORY.md line for each memory among rels that has
// none, journaling each index it changes in rec, and returns the memories it
// indexed. MEMORY.md itself, daily logs and files that are not memories are
// skipped, and so are team memories whose line would carry a potential
// secret into team/MEMORY.md. The caller holds the directory lock (see Change), as an agent run
// that wrote the memories does.
func (d *Dir) IndexMissing(rec *Recorder, rels []string) ([]string, error) {
	root, err := d.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	indexes := map[string]*Index{}
	var added []string
	for _, rel := range rels {
		if _, err := CleanMemoryFilePath(rel); err != nil || isDailyLog(rel) {
			continue
		}
		indexRel, link := IndexFor(rel)
		ix := indexes[indexRel]
		if ix == nil {
			if ix, err = d.readIndex(root, indexRel); err != nil {
				return added, err
			}
			indexes[indexRel] = ix
		}
		if len(ix.Find(link)) > 0 {
			continue
		}
		if _, _, moved, err := d.overflowHolding(root, indexRel, link, ix); err != nil {
			return added, err
		} else if moved {
			continue // its line is in the overflow file compaction moved it to
		}
		line, err := pointerLine(root, rel)
		if err != nil {
			continue // gone or unreadable: nothing to point at
		}
		if checkTeamWrite(indexRel, []byte(line)) != nil {
			continue // a secret in the title or hook stays out of team/MEMORY.md
		}
		if err := rec.Before(indexRel); err != nil {
			return added, err
		}
		ix.Upsert(link, line)
		if err := d.writeIndex(root, indexRel, ix); err != nil {
			return added, err
		}
		added = append(added, rel)
	}
	return added, nil
}

// isDailyLog reports whether rel is an assistant-mode daily log, which is
// distilled by consolidation rather than indexed.
func isDailyLog(rel string) bool { return strings.HasPrefix(rel, "logs/") }
