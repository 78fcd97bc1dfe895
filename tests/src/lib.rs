//! flowc-tests: the corpus, the random program generator, and the test suites.
