"""The front end: from words to tagged words (and, in a later step, from text to words).

`features` (what a tagger reads of each word, hashed), `classifier` (a compiled averaged
perceptron over candidate classes, decoded greedily left to right), `tagger` (`Tagger`:
UPOS, XPOS and FEATS), `lemmatizer` (`Lemmatizer`: a form dictionary and edit scripts).
The front end imports no parser family.
"""
