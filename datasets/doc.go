// Package datasets writes the datasets of troupe's shipped real-size
// configs from their public sources (`train data NAME --out DIR`): each
// NAME is the data of one config family (catalog.go), fetched from Hugging
// Face dataset repositories and converted into exactly the files, layout and
// paths the config reads (data/... relative to DIR), so that the config's
// own dataset readers accept them as they stand.
//
// Files:
//
//	doc.go          this overview
//	catalog.go      the names, their outputs and sources; CommandFor, the command that writes a path
//	write.go        a run: keeping what exists, scratch space, atomic outputs, the manifest
//	hub.go          the Hub's API and downloads, checked against the checksums it publishes
//	local.go        the same from repositories downloaded by hand (--from)
//	progress.go     the progress lines of downloads
//	splits.go       which files of a repository hold a split
//	records.go      reading Parquet, JSONL and JSON records, column order kept
//	python.go       Python's str(), repr(), strip() and splitlines() of source values
//	drmasmath.go    drmas-math: Dr. MAS's drmas_math.py
//	pettingllms.go  atgrpo-math: PettingLLMs' load_math.py
//	searchr1.go     drmas-search: Search-R1's files, Dr. MAS's sample, the wiki-18 corpus
//	jsonlsets.go    atgrpo-code, magrpo-writing, magrpo-coding: MBPP, TLDR, HumanEval as JSONL
//
// What it is: a converter that reproduces what the reference projects'
// preprocessing scripts write (Dr. MAS's drmas_math.py, PettingLLMs'
// load_math.py, Search-R1's uploaded NQ + HotpotQA files with Dr. MAS's
// sampling, CoMLRL's dataset splits), row for row, with the departures each
// file's header names. What it is not: a general Hugging Face datasets
// client (no dataset scripts, no README `configs:` metadata: the split's
// files are found by the Hub's file-name conventions), nor anything a run
// calls: runs read local files only (config calls CommandFor to name the
// command in its "file not found").
package datasets
