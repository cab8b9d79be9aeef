package ingest

// Files returns the data files that Run reads for inputs (files,
// directories and glob patterns), in the order it reads them: for
// commands that read the same inputs another way, such as predict.
func Files(inputs []string) ([]string, error) {
	return expandInputs(inputs)
}
