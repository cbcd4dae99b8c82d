"""The timeline's state without Qt: which tracks there are and in what order (:mod:`.track_order`), where
each is placed as groups collapse, tracks are pinned or filtered (:mod:`.layout`), and what the user has
selected, measured or marked (:mod:`.view_state`). The Qt widget in ``app/timeline`` draws what these say."""
