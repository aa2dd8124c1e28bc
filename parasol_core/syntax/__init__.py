"""Floor 2: text to model and back.

* :mod:`.loader`: ``load``/``loads``, the driver of a whole model file (decoding, line
  checks, then the reader);
* :mod:`.reader`: the parser (recursive descent; lark's grammar is its specification in
  the tests), with :mod:`.fastscan` (bulk tables), :mod:`.builder` (the objects) and
  :mod:`.wording` (how syntax errors are worded);
* :mod:`.expression`, :mod:`.build_expr`: one expression from text;
* :mod:`.annotations`: ``# piui:`` comments PIUI reads;
* :mod:`.writer`, :mod:`.inplace`, :mod:`.bulk_text`: model to text, edited in place
  where the file was read from;
* :mod:`.jsonio`: the model as JSON.
"""

FLOOR = 2
