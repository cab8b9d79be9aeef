package ingest

// Files returns the data files that Run reads for inputs (files,
// directories and glob patterns), in the order it reads them: for
// commands that read the same inputs another way, such as predict. Files
// of predictions written by falkon-ooc, found in a folder or by a glob,
// are left out (List returns them).
func Files(inputs []string) ([]string, error) {
	files, _, err := expandInputs(inputs)
	return files, err
}

// List is Files, and the files of predictions written by falkon-ooc that
// it left out (SkippedNote words their count for the user).
func List(inputs []string) (files, skipped []string, err error) {
	return expandInputs(inputs)
}
