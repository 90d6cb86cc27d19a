"""The front end: from raw text to words, and from words to tagged words.

`features` (what a tagger reads of each word, hashed), `classifier` (a compiled averaged
perceptron over candidate classes, decoded greedily left to right), `tagger` (`Tagger`:
UPOS, XPOS and FEATS), `lemmatizer` (`Lemmatizer`: a form dictionary and edit scripts),
`tokenizer` (`Tokenizer`: sentences and tokens of raw text, after the `rules` that hold in
every language), `multiword`, `jackknife`.
The front end imports no parser family.
"""
