package reliability

import (
	"fmt"
	"net/http"
)

// createFeedback serves POST /feedback: 200 with the feedback and, for a
// thumbs_down, what its refund did.
func (a *API) createFeedback(r *http.Request, rc reqCtx) (int, any, *apiError) {
	obj, aerr := readObject(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if verr := obj.allow("call_id", "rating", "correction", "tags"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	if verr := obj.required("call_id"); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	fb := Feedback{OrgID: rc.orgID, CreatedAt: a.now()}
	var verr *ValidationError
	if fb.CallID, _, verr = obj.text("call_id", 1, maxCallIDLen); verr != nil {
		return 0, nil, errBadRequest(verr)
	}
	if obj.present("rating") {
		rating, _, verr := obj.str("rating")
		if verr == nil && rating != RatingThumbsUp && rating != RatingThumbsDown {
			verr = invalid("rating", "must be %s or %s", RatingThumbsUp, RatingThumbsDown)
		}
		if verr != nil {
			return 0, nil, errBadRequest(verr)
		}
		fb.Rating = &rating
	}
	if obj.present("correction") {
		correction, _, verr := obj.text("correction", 0, maxCorrectionLen)
		if verr != nil {
			return 0, nil, errBadRequest(verr)
		}
		fb.Correction = &correction
	}
	if obj.present("tags") {
		if fb.Tags, verr = parseTags(obj); verr != nil {
			return 0, nil, errBadRequest(verr)
		}
	}
	if fb.Rating == nil && fb.Correction == nil && fb.Tags == nil {
		return 0, nil, errBadRequest(&ValidationError{Param: "rating", Code: CodeMissingParameter,
			Message: "at least one of rating, correction and tags is required"})
	}
	if rc.userID != "" {
		fb.UserID = &rc.userID
	}
	if _, aerr := load(a, rc, "call", fb.CallID, "call_id", a.Store.Call, func(c Call) string { return c.OrgID }); aerr != nil {
		return 0, nil, aerr
	}
	if err := a.Store.CreateFeedback(&fb, a.FairUse); err != nil {
		return 0, nil, a.fromStore(err, "storing feedback", "call_id", "call", fb.CallID)
	}
	return http.StatusOK, fb, nil
}

// parseTags reads the tags field: at most 64 strings of 1 to 64 characters.
func parseTags(obj jsonObject) ([]string, *ValidationError) {
	raws, _, verr := obj.array("tags")
	if verr != nil {
		return nil, verr
	}
	if len(raws) > maxTags {
		return nil, invalid("tags", "must have at most %d items, not %d", maxTags, len(raws))
	}
	tags := make([]string, len(raws))
	for i, raw := range raws {
		param := fmt.Sprintf("tags[%d]", i)
		tag, verr := stringItem(param, raw)
		if verr == nil {
			if n := textLen(tag); n < 1 || n > maxTagLen {
				verr = invalid(param, "must be 1 to %d characters, not %d", maxTagLen, n)
			}
		}
		if verr != nil {
			return nil, verr
		}
		tags[i] = tag
	}
	return tags, nil
}
