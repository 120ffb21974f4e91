"""The maintained data qnndoctor decides with (shipped as ``qnndoctor.matrix``).

``socs.json``: Qualcomm SoCs, their Hexagon HTP architecture, QNN ``soc_model``
ids, Linux ``soc0/soc_id`` values and Windows processor-name patterns, each
entry with its public sources.
"""
