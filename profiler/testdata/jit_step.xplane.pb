
’	/host:CPUJÌß˜¶Î¶ıÖ™python³."
ÈáæÀâÊ„"
€²Ô¸‹Ú„" êd¨†’†Zpython"!

PjitFunction(raytpu_step)"ParseArguments
Task Environment"vm