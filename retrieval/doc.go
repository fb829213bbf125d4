// Package retrieval finds the passages a search agent reads: an embedded
// Okapi BM25 index over a passage corpus, a client for a Search-R1
// retrieval server, and that server's API over any Retriever, so troupe
// runs, other tools and other machines can share one retriever.
//
// Files:
//
//	doc.go     this overview
//	bm25.go    the in-memory BM25 index (Build, Search, Retrieve)
//	store.go   corpora and indexes on disk (LoadCorpus, Save, Open)
//	client.go  the Search-R1 retrieval server client
//	server.go  the retrieval server API over a Retriever
//	answer.go  building a /retrieve answer inside its byte budget
//	auth.go    the server's optional bearer token
//	limits.go  what one server may hold at once: the bounds on a request
//	listen.go  running a Server on a listener: timeouts and shutdown
//
// What it is not: a dense retriever. For e5/FAISS retrieval point troupe at
// a Search-R1 server (client.go).
package retrieval
