"""Original conversation text for the ``mtr-en`` suite: 20 topics of 10 rounds each.

Each round is ``(user turn, reference system reply)``.  Written for duplexeval (Apache-2.0);
not taken from any corpus.  ``scripts/make_mtr_specs.py`` places the MTR features on them.
"""

from __future__ import annotations

OPENER = ("Hi there, I am your assistant. I am happy to talk about anything you like, so go "
          "ahead and tell me what is on your mind today.")

TOPICS: list[tuple[str, list[tuple[str, str]]]] = [
    ("Keeping houseplants alive", [
        ("I keep buying houseplants, and somehow they all die within a month.",
         "That happens to a lot of people. Most often the cause is watering too much, which "
         "rots the roots long before the leaves show it."),
        ("So how do I know when a plant actually needs water?",
         "Push a finger into the soil up to the first knuckle. If it feels dry at that depth, "
         "water it well, and if it is damp, wait."),
        ("My flat is quite dark though, especially in the winter months.",
         "Then pick plants that tolerate low light, such as a snake plant, a pothos or a ZZ "
         "plant. They grow slowly but forgive a lot."),
        ("Do those need special soil, or is regular compost fine for them?",
         "Regular potting mix is fine for all three. Adding a handful of perlite helps the "
         "water drain, which keeps the roots healthy."),
        ("What about the pots, should they have holes in the bottom?",
         "Yes, drainage holes matter a lot. Without them water collects at the bottom and the "
         "roots sit in it and slowly rot away."),
        ("I also noticed little flies around one of my plants lately.",
         "Those are probably fungus gnats. They breed in wet soil, so letting the top layer dry "
         "out between waterings usually gets rid of them."),
        ("Should I be feeding my plants with some kind of fertilizer?",
         "A little, during spring and summer. A liquid fertilizer at half strength once a month "
         "is plenty for most indoor plants in a flat."),
        ("And when do I move them into a bigger pot?",
         "When roots start growing out of the drainage holes, or the water runs straight "
         "through. Go up just one pot size at a time."),
        ("Is it true that talking to plants helps them grow?",
         "There is no solid evidence for that. Still, people who talk to their plants tend to "
         "check on them often, and that attention helps."),
        ("Okay, I think I will try a snake plant first and see.",
         "That is a great choice to start with. Water it every two or three weeks, keep it "
         "away from cold drafts, and it should thrive."),
    ]),
    ("Learning the guitar as an adult", [
        ("I am thinking about learning the guitar, even though I am forty.",
         "Forty is a fine age to start. Adults often progress quickly because they practise "
         "with a purpose and understand music theory faster."),
        ("Should I begin with an acoustic or an electric guitar?",
         "Either works. An electric is easier on the fingers because the strings are lighter, "
         "while an acoustic needs nothing else to play."),
        ("My fingertips already hurt after playing for just ten minutes.",
         "That is completely normal in the first weeks. Short daily sessions let calluses form, "
         "and after a month the pain mostly goes away."),
        ("How long should I practise each day to really improve?",
         "Twenty to thirty focused minutes a day beats a long session once a week. Regular "
         "practice is what builds the finger memory you need."),
        ("Which chords should a complete beginner learn first, would you say?",
         "Start with G, C, D and E minor. With just those four chords you can already play "
         "hundreds of popular songs from many decades."),
        ("Switching between chords is the hardest part for me right now.",
         "Practise just two chords back and forth, slowly, for one minute at a time. Speed "
         "comes later, once your fingers know the shapes."),
        ("Do I need to learn to read music to play well?",
         "Not really. Many great guitarists never read standard notation. Chord charts and tabs "
         "are enough for most styles of popular music."),
        ("Are online video lessons good enough, or do I need a teacher?",
         "Videos can take you a long way. A few lessons with a teacher are still worth it, "
         "because they spot bad habits you cannot see yourself."),
        ("I also worry that my neighbours will hear me practising badly.",
         "Most neighbours hardly notice an acoustic guitar at normal volume. With an electric "
         "you can simply plug in headphones and nobody hears anything."),
        ("Alright, I think I will buy a used acoustic this weekend.",
         "That sounds like a good plan. Ask the shop to check the string height, because a "
         "well set up guitar is much easier to play."),
    ]),
    ("Baking bread at home", [
        ("I want to start baking my own bread at home this year.",
         "That is a rewarding hobby. A basic loaf needs only flour, water, salt and yeast, and "
         "most of the time is simply waiting."),
        ("Which kind of flour should I buy for my first loaf?",
         "Use bread flour if you can find it. It has more protein than plain flour, which gives "
         "the dough more stretch and a better rise."),
        ("My last attempt came out flat and very dense in the middle.",
         "That usually means the dough did not rise long enough, or the yeast was old. Try "
         "fresh yeast and let it double in size first."),
        ("How warm should the room be while the dough is rising?",
         "Somewhere around twenty four degrees Celsius is ideal. In a cooler kitchen it still "
         "works, it just takes longer, which can improve the flavour."),
        ("What is the point of kneading the dough for so long?",
         "Kneading builds gluten, the network that traps the gas from the yeast. Without it, "
         "the bubbles escape and the bread cannot rise properly."),
        ("I have heard people talk a lot about sourdough starters lately.",
         "A starter is a mix of flour and water full of wild yeast and bacteria. It replaces "
         "packet yeast and gives bread a tangy taste."),
        ("Is a sourdough starter hard to keep alive for a beginner?",
         "Not very. You feed it flour and water once a day, or once a week if you keep it in the "
         "fridge between bakes."),
        ("How can I tell when the bread is fully baked inside?",
         "Tap the bottom of the loaf. If it sounds hollow it is done. A thermometer in the "
         "centre should read about ninety five degrees."),
        ("Why do bakers put a tray of water in the oven?",
         "The steam keeps the crust soft for the first minutes, so the loaf can expand fully. "
         "Later the crust dries and turns crisp and brown."),
        ("Great, I will try a simple yeast loaf on Sunday.",
         "Good luck with it. Write down what you did each time, because small changes in water "
         "or timing make a big difference in bread."),
    ]),
    ("Cycling to work", [
        ("I am considering cycling to work instead of taking the bus.",
         "That can be a great change. You get exercise built into your day, and in a city it is "
         "often as fast as the bus."),
        ("The ride would be about eight kilometres each way, though.",
         "Eight kilometres takes most people around thirty minutes at a relaxed pace. After a "
         "couple of weeks it will feel much easier than at first."),
        ("Do I need an expensive bike for a commute like that?",
         "Not at all. A reliable used bike with good brakes and working gears is enough. Spend "
         "money on lights and a strong lock instead."),
        ("I am a bit nervous about riding in heavy traffic, honestly.",
         "That is understandable. Look for quieter side streets or bike lanes, even if the route "
         "gets a little longer, and ride it first on a weekend."),
        ("What should I do about arriving at the office all sweaty?",
         "Ride a bit slower than you can, and keep a fresh shirt at work. Many offices also have "
         "a shower or at least a changing room."),
        ("And how do people manage cycling when it is raining?",
         "Mudguards help more than anything, along with a light rain jacket. Honestly, most "
         "rainy days only bring a few minutes of real rain."),
        ("Should I learn how to fix a flat tyre myself?",
         "Yes, it is worth learning. A spare tube, two tyre levers and a small pump fit in a bag, "
         "and the repair takes about ten minutes."),
        ("Is it safe to leave the bike outside my office all day?",
         "Use a solid D lock through the frame and a fixed rack. Busy, visible spots are safer "
         "than quiet corners where thieves can work unseen."),
        ("How much money could I save compared to the bus pass?",
         "That depends on your city, but a monthly pass often costs more than a year of basic "
         "bike maintenance, so the savings add up quickly."),
        ("I think I will try it two days a week to start.",
         "That is a sensible way to begin. You can add more days as you get fitter and more "
         "confident with the route and the traffic."),
    ]),
    ("Planning a first camping trip", [
        ("My friends and I want to go camping for the first time.",
         "How exciting. For a first trip, a campsite with toilets and running water makes "
         "everything easier while you learn what you really need."),
        ("What kind of tent should we look for as beginners?",
         "Choose a tent rated for one more person than your group. The extra room is welcome, "
         "and dome tents are the easiest to put up."),
        ("Do we really need proper sleeping mats, or just sleeping bags?",
         "You really want mats. The ground pulls heat from your body all night, and a mat keeps "
         "you warm as much as the bag does."),
        ("How should we plan the food for two nights out there?",
         "Keep it simple: pasta, sausages, oats and fruit. Plan each meal in advance, and bring "
         "a little more water than you think you will need."),
        ("One of my friends is worried about wild animals at night.",
         "At most campsites the biggest threat is a curious fox or raccoon. Store food in the car "
         "or a sealed box, and never keep it inside the tent."),
        ("What if it rains the whole weekend while we are there?",
         "Pack a tarp to hang over the cooking area, and keep a set of dry clothes in a plastic "
         "bag. Rain is much easier with a dry place to sit."),
        ("Can we make a campfire, or is that usually not allowed?",
         "It depends on the site and the season. Many campsites allow fires in fixed fire rings, "
         "but check the rules, especially in dry summer months."),
        ("Should we practise setting up the tent at home first?",
         "Definitely, do it once in a garden or a park. Putting up an unfamiliar tent in the "
         "dark or in the rain is no fun at all."),
        ("How far from home would you suggest for a first trip?",
         "Somewhere within two hours of driving is ideal. If something goes wrong or the weather "
         "turns bad, you can simply pack up and head home."),
        ("Okay, we will pick a campsite near the lake next month.",
         "That sounds lovely. Book early if it is a popular lake, and have a great time learning "
         "the ropes together with your friends."),
    ]),
    ("Adopting a dog", [
        ("We are thinking about adopting a dog from the local shelter.",
         "That is a wonderful thing to do. Shelter staff know their dogs well, so tell them "
         "about your home and your daily routine."),
        ("Is a puppy or an older dog better for a busy family?",
         "For a busy family an adult dog is often easier. Puppies need constant supervision and "
         "training, while many adults are already house trained."),
        ("We live in a flat with only a small balcony, though.",
         "Many dogs live happily in flats. What matters most is daily walks and play, not the "
         "size of the home, so choose a calmer breed."),
        ("How much exercise does an average dog need every day?",
         "Most dogs need at least an hour of activity a day, split into a few walks. Young and "
         "working breeds often need a good deal more."),
        ("What should we buy before we bring the dog home?",
         "A bed, food and water bowls, a collar with a tag, a lead and some chew toys. Ask the "
         "shelter which food the dog is used to."),
        ("The kids are very excited, but they are only six and eight.",
         "That is a good age to help with simple jobs like filling the water bowl. Teach them to "
         "let the dog rest and never disturb it while it eats."),
        ("How long does it usually take a shelter dog to settle in?",
         "People often talk about three days, three weeks and three months. The dog slowly "
         "relaxes, and its real personality shows after a few months."),
        ("Should we take the dog to training classes at some point?",
         "Yes, group classes are very useful. They teach basic commands, and they also help you "
         "and the dog learn to understand each other."),
        ("What does a dog cost each year, roughly speaking?",
         "For a medium sized dog, food, vet visits, insurance and supplies add up to well over a "
         "thousand euros a year in many countries."),
        ("Thanks, we will visit the shelter together on Saturday.",
         "Enjoy the visit. Take your time, meet a few dogs, and ask the staff to introduce you to "
         "one that fits your family's pace of life."),
    ]),
    ("Learning Spanish", [
        ("I have decided to learn Spanish before my trip next year.",
         "Great decision. With a year to go, even fifteen minutes a day will get you to simple "
         "conversations by the time you travel."),
        ("Should I focus on grammar first, or just vocabulary?",
         "Mix both, but lean towards useful phrases. Learning whole sentences like ordering food "
         "teaches grammar and vocabulary at the same time."),
        ("I always freeze when I have to actually speak to someone.",
         "That is very common. Practise speaking aloud alone first, even reading dialogues to "
         "yourself, so the sounds feel familiar in your mouth."),
        ("Are language apps on the phone actually useful for learning?",
         "They are good for daily habits and vocabulary. On their own they rarely teach you to "
         "hold a conversation, so combine them with real speaking."),
        ("How can I practise speaking if I do not know any Spanish speakers?",
         "Online exchange partners are a good option. You talk half the time in Spanish and half "
         "in English, and both of you benefit from it."),
        ("Which accent should I learn, the one from Spain or Mexico?",
         "Pick the one of the country you will visit most. Both are understood everywhere, and "
         "the differences are smaller than people expect."),
        ("The verb conjugations look really overwhelming to me at the moment.",
         "Start with just the present tense of the most common verbs, like ser, tener and ir. "
         "You can say a surprising amount with those alone."),
        ("Would watching Spanish television shows help me improve?",
         "Yes, especially with Spanish subtitles. You hear natural speed and real expressions, "
         "and the pictures help you guess the meaning."),
        ("How will I know if I am making real progress?",
         "Record yourself talking for one minute every month. When you listen back after a few "
         "months, the improvement is usually very easy to hear."),
        ("I will start with fifteen minutes every morning, then.",
         "That is a solid habit to build. Pair it with your morning coffee, and it will soon "
         "feel like a normal part of your day."),
    ]),
    ("Saving money", [
        ("I really want to start saving money, but it never seems to work.",
         "You are not alone in that. The most reliable trick is to move money into savings on "
         "payday, before you have a chance to spend it."),
        ("How much of my salary should I try to save?",
         "A common guide is around twenty percent, but any fixed amount is a good start. Even "
         "five percent builds the habit that matters most."),
        ("I honestly have no idea where my money goes each month.",
         "Then track every expense for one month, without changing anything. Most people find a "
         "few surprises, often small daily purchases that add up."),
        ("Should I cancel some of my streaming subscriptions, do you think?",
         "Keep the ones you use every week and cancel the rest. You can always subscribe again "
         "for a month when a show you love comes out."),
        ("What is an emergency fund, and do I need one?",
         "It is money set aside for surprises, like a broken boiler. Aim for three months of "
         "basic expenses, kept in an account you can reach quickly."),
        ("I also have some credit card debt at the moment.",
         "Paying that off usually comes first, because card interest is far higher than anything "
         "savings earn. Start with the card charging the most interest."),
        ("Is cooking at home really that much cheaper than eating out?",
         "Usually it is, by a wide margin. A home cooked meal often costs a quarter of the same "
         "dish in a restaurant, especially if you cook in batches."),
        ("What about big purchases, like a new laptop or a phone?",
         "Try a waiting rule: wait thirty days before buying anything expensive. If you still "
         "want it after a month, save for it, then buy it without regret."),
        ("Do savings accounts pay enough interest to bother with?",
         "Some do better than others, so compare them. The main point, though, is keeping the "
         "money separate, so you are less tempted to spend it."),
        ("Okay, I will set up an automatic transfer this payday.",
         "That is the best first step. Start with an amount you will not miss, and raise it a "
         "little each time your income goes up."),
    ]),
    ("Training for a first five kilometre run", [
        ("I signed up for a five kilometre run, and I have never run before.",
         "Congratulations on signing up. With eight to ten weeks of gradual training, almost "
         "anyone can finish five kilometres comfortably."),
        ("How should I start if I can only run for a minute?",
         "Alternate one minute of running with two minutes of walking, for twenty minutes. Each "
         "week, make the running parts a little longer."),
        ("How many times a week should I go out running?",
         "Three times a week is ideal for beginners. The rest days are when your muscles and "
         "joints adapt, so they are part of the training."),
        ("My knees ache a bit after my runs, is that bad?",
         "Mild soreness is common at first, but sharp or lasting pain is not. Slow down, run on "
         "softer ground, and check that your shoes fit well."),
        ("Do I really need to buy proper running shoes?",
         "It is worth it. A running shop can watch you jog and suggest shoes that suit your feet, "
         "which helps prevent many common injuries."),
        ("What should I eat before a morning run, if anything?",
         "Something small and easy, like a banana or a slice of toast, about an hour before. "
         "For short runs, many people run fine on an empty stomach."),
        ("I get out of breath really quickly when I run.",
         "You are probably going too fast. Slow down until you can talk in short sentences "
         "while running, and your endurance will grow from there."),
        ("Should I stretch before running or only afterwards?",
         "Before, a gentle warm up walk and some leg swings work best. Save longer, static "
         "stretches for after the run, when your muscles are warm."),
        ("What pace should I aim for on the day of the race?",
         "For a first race, aim simply to finish and enjoy it. Start slower than you feel like, "
         "because the excitement makes everyone start too fast."),
        ("Right, I will start my first training session tomorrow morning.",
         "Wonderful. Keep that first session easy, and remember that showing up three times a "
         "week matters far more than speed right now."),
    ]),
    ("Sleeping better", [
        ("I have been sleeping really badly for the past few weeks.",
         "I am sorry to hear that. Poor sleep affects everything, so it is worth looking at "
         "your habits during the day and the evening."),
        ("I usually scroll on my phone in bed until midnight.",
         "That is one of the most common culprits. The bright screen and the endless content "
         "keep your brain alert, so try stopping an hour before bed."),
        ("Does it matter what time I go to bed each night?",
         "Consistency matters a lot. Going to bed and getting up at the same time, even at "
         "weekends, helps your body clock settle into a rhythm."),
        ("I drink quite a lot of coffee during the afternoon.",
         "Caffeine can stay in your body for many hours. Try having your last coffee before "
         "lunch and see whether falling asleep gets any easier."),
        ("What should my bedroom be like for the best sleep?",
         "Dark, quiet and a little cool, around eighteen degrees. Blackout curtains and "
         "earplugs are cheap and can make a real difference."),
        ("Sometimes I wake up at three and cannot get back to sleep.",
         "If you are awake for more than twenty minutes, get up and do something calm in dim "
         "light, like reading, then go back when you feel sleepy."),
        ("Is a short nap in the afternoon a good idea?",
         "A nap of twenty minutes early in the afternoon is usually fine. Long or late naps, "
         "though, can make it harder to fall asleep at night."),
        ("Does exercise during the day help with sleeping at night?",
         "Yes, regular exercise generally improves sleep. Just try to finish hard workouts a few "
         "hours before bed, so your body has time to calm down."),
        ("When should someone actually see a doctor about their sleep?",
         "If poor sleep lasts more than a few weeks, or you snore loudly and feel exhausted, a "
         "doctor can check for conditions like sleep apnoea."),
        ("Okay, tonight I will leave my phone in the kitchen.",
         "That is a great experiment. Put a book by your bed instead, and give the new routine "
         "at least a week before you judge the results."),
    ]),
    ("Starting a vegetable garden", [
        ("I would like to grow some vegetables in my back garden.",
         "That is a lovely project. Start small, with a bed of a few square metres, so it stays "
         "fun rather than becoming a chore."),
        ("Which vegetables are easiest for someone who has never gardened?",
         "Lettuce, radishes, courgettes and green beans are all very forgiving. Radishes are "
         "especially nice because they are ready in about four weeks."),
        ("The garden only gets sun in the afternoon, is that enough?",
         "Most vegetables want at least six hours of sun. Leafy greens and herbs cope well with "
         "less, so plant those in the shadier spots."),
        ("How do I prepare the soil before I plant anything?",
         "Clear the weeds, loosen the soil with a fork, and mix in a good layer of compost. "
         "Healthy soil does most of the work for you."),
        ("Should I grow everything from seeds or buy young plants?",
         "A mix works well. Sow easy things like beans and radishes directly, and buy young "
         "tomato and pepper plants, which need a long warm start."),
        ("Slugs ate everything my neighbour planted last year.",
         "Slugs are a common problem. Check plants in the evening, use copper tape or beer "
         "traps, and encourage birds and frogs that eat them."),
        ("How often will I need to water the vegetable bed?",
         "Water deeply once or twice a week rather than a little every day. Deep watering "
         "sends roots downwards, where the soil stays moist for longer."),
        ("Can I use the grass clippings from my lawn somehow?",
         "Yes, as a thin mulch around the plants. It keeps moisture in and weeds down, but keep "
         "the layer thin so it does not turn slimy."),
        ("When is the right time to plant tomatoes outside?",
         "After the last frost, when nights stay above ten degrees. In many places that means "
         "late spring, so watch the forecast carefully."),
        ("Great, I will start with lettuce and radishes this spring.",
         "A perfect pair for a first season. You will be eating your own salad within a month or "
         "two, which is a great motivation to grow more."),
    ]),
    ("Hosting a board game night", [
        ("I want to host a board game night for some friends.",
         "What a fun idea. The key is choosing games that suit the group, so think about how "
         "many people are coming and how competitive they are."),
        ("There will be about six people, and most are new to board games.",
         "With six beginners, party games with simple rules work best. Games where everyone "
         "plays at once avoid long waits between turns."),
        ("Can you suggest a type of game that is easy to explain?",
         "Word and drawing games are great, because the rules take two minutes. Cooperative games "
         "are also good, since everyone works together against the game."),
        ("How long should the whole evening last, roughly?",
         "Plan for about three hours, with two or three games. Start with a short, easy one "
         "while people arrive, and keep a longer one for later."),
        ("What kind of snacks work well at the table?",
         "Choose food that does not leave greasy fingers, such as grapes, pretzels or small "
         "sandwiches. Cards and boards last longer that way."),
        ("One friend gets really upset whenever he loses a game.",
         "Cooperative games help a lot in that case, since the whole table wins or loses "
         "together. Keeping the mood light also takes the sting out."),
        ("Should I read the rules before everyone arrives?",
         "Yes, and ideally play a practice round alone. Explaining rules confidently keeps the "
         "energy up, while reading them aloud slowly drains it."),
        ("How do I explain a game without it becoming boring?",
         "Start with the goal of the game, then the basic turn, and leave the rare exceptions "
         "for when they come up during play."),
        ("Is it a good idea to make this a monthly event?",
         "Many groups love a regular night. Letting a different friend pick a game each month "
         "keeps it fresh and shares the planning work."),
        ("Okay, I will invite everyone for next Friday evening.",
         "That sounds like a great evening. Send the invitation early, ask about any food "
         "allergies, and have fun being the host."),
    ]),
    ("Taking better photos with a phone", [
        ("My phone photos always look worse than what I actually see.",
         "That is a common frustration. The good news is that a few simple habits make a big "
         "difference, even with an ordinary phone camera."),
        ("Where should I start if I want better pictures quickly?",
         "Start with light. Turn your subject towards a window or soft daylight, and avoid "
         "harsh midday sun, which creates strong shadows."),
        ("My pictures of people indoors are often quite blurry.",
         "Indoor light is dim, so the camera uses slow shutter speeds. Hold the phone with both "
         "hands, lean on something, and move closer to a light source."),
        ("Should I use the zoom when my subject is far away?",
         "Digital zoom reduces quality, so walk closer if you can. If your phone has a separate "
         "telephoto lens, that zoom is fine to use."),
        ("What is the rule of thirds that photographers talk about?",
         "Imagine the frame split into a grid of nine squares. Placing your subject on one of the "
         "lines, rather than the centre, often looks more balanced."),
        ("Are the built in filters a good idea or not?",
         "Use them lightly, if at all. Small adjustments to brightness and contrast usually look "
         "more natural than strong filters, which date quickly."),
        ("Sunset photos always come out too dark on my phone.",
         "Tap on the bright sky to set the focus, then slide the exposure up a little. Or tap on "
         "the foreground instead, and let the sky glow."),
        ("Is it worth buying a small tripod for the phone?",
         "For night shots and group photos with a timer, definitely. Small tripods are cheap, "
         "light, and many fold into the size of a pen."),
        ("How can I keep all my photos organised on the phone?",
         "Delete the failed shots right away, and make albums for trips and events. Backing "
         "everything up regularly also protects you from losing memories."),
        ("I will try shooting near the window with the light this evening.",
         "Perfect, that is the easiest way to see an improvement. Try a few angles, compare the "
         "results, and you will quickly develop an eye for light."),
    ]),
    ("Reading more books", [
        ("I used to read a lot, but now I hardly finish any books.",
         "That happens to many adults. Phones and busy schedules eat the small moments we used "
         "to spend reading, but the habit can come back."),
        ("How can I find time to read when my days are so full?",
         "Look for small pockets of time, like the commute or the last twenty minutes before "
         "bed. Ten pages a day adds up to many books a year."),
        ("I often lose interest halfway through a book, honestly.",
         "Then give yourself permission to stop. Life is too short for books you do not enjoy, "
         "and dropping one makes room for one you will love."),
        ("Do audiobooks count as real reading, do you think?",
         "For most purposes, yes. You still follow the story and the ideas, and audiobooks fit "
         "into times when you cannot hold a book, like cooking."),
        ("What kind of book would help me get back into reading?",
         "Something short and gripping, such as a thriller or a collection of short stories. "
         "Finishing a book quickly rebuilds momentum and confidence."),
        ("Would joining a book club be a good idea for me?",
         "It can be, because a date and a group add gentle pressure. It also introduces you to "
         "books you would never have picked yourself."),
        ("Are electronic readers better than paper books for this?",
         "It is mostly personal taste. E readers are light and easy to read in bed, while paper "
         "books are free from notifications and distractions."),
        ("How do I remember more of what I actually read?",
         "Write two or three sentences about each book when you finish it. Talking about the "
         "book with someone else also helps it stick in memory."),
        ("Should I set myself a goal of books for the year?",
         "A modest goal can help, like one book a month. Just avoid turning reading into a race, "
         "which can make it feel like homework again."),
        ("I will start a short mystery novel tonight, then.",
         "A great choice to begin with. Keep it by your bed, read a chapter each night, and see "
         "how quickly the old habit returns."),
    ]),
    ("Planning a birthday party", [
        ("I am planning a surprise birthday party for my sister.",
         "How thoughtful of you. Surprise parties take careful planning, so start by picking a "
         "date and one trusted person to help keep the secret."),
        ("She is turning thirty, and she loves anything related to music.",
         "Then a music theme would be perfect. You could make a playlist of songs from every "
         "year of her life, or hire a small local band."),
        ("How many guests should I invite to the party?",
         "Think about the space and your budget first. For a surprise, a group of close friends "
         "and family is often more meaningful than a big crowd."),
        ("How can I get her to the venue without her guessing?",
         "Ask someone close to her to invent a simple plan, like a quiet dinner. The more normal "
         "the excuse, the less likely she is to suspect anything."),
        ("What kind of food should I serve to everyone?",
         "Finger food works well at parties, because people can eat while standing and "
         "talking. Add the birthday cake, of course, and a few vegetarian options."),
        ("Should I order a cake or try to bake one myself?",
         "If baking is not your hobby, ordering one removes a lot of stress. You could still add "
         "a personal touch with decorations or a message on top."),
        ("I am worried that someone will accidentally tell her about it.",
         "Share the details only with guests who need them, and send reminders that it is a "
         "secret. A group chat without her in it helps a lot."),
        ("What should everyone do at the moment she walks in?",
         "Keep the lights low and the room quiet, then shout surprise together. Have someone "
         "ready to film her reaction, because it is over in seconds."),
        ("Do you have an idea for a meaningful group present?",
         "Everyone could write a short note or record a memory with her. Collected in a book or "
         "a video, it becomes a present she will keep for years."),
        ("Thanks, I will book the back room of her favourite cafe.",
         "That sounds perfect. Confirm the booking in writing, check how early you can decorate, "
         "and enjoy the moment when she walks in."),
    ]),
    ("Moving to a new city", [
        ("I am moving to a new city for work next month.",
         "That is a big step. Moving is exciting and tiring at the same time, so try to plan the "
         "first weeks before you even arrive."),
        ("How do I choose which neighbourhood to live in there?",
         "Think about your commute first, then what you enjoy nearby, such as parks or cafes. "
         "If you can, visit a few areas at different times of day."),
        ("Should I rent a place before I move, or find it after arriving?",
         "Many people rent a short term room for the first month. It lets you explore before "
         "signing a long contract in an area you do not know."),
        ("I do not know a single person in that city.",
         "That can feel lonely at first. Colleagues are a natural start, and clubs or classes "
         "around a hobby are a great way to meet people regularly."),
        ("What paperwork do I need to sort out right after moving?",
         "Usually registering your address, updating your bank and doctor, and changing where "
         "your post goes. Make a list so nothing slips through."),
        ("How can I get to know the city quickly, would you say?",
         "Walk or cycle instead of always taking the metro. Getting a little lost on foot is one "
         "of the fastest ways to build a map in your head."),
        ("I am worried I will miss my family a lot.",
         "That is natural and shows how close you are. Regular video calls help, and planning "
         "your first visit home gives you something to look forward to."),
        ("Is it worth hiring a moving company for my things?",
         "If you have furniture, it often is, because vans, fuel and time add up. For a few "
         "boxes, a rented van and a friend may be enough."),
        ("What should I pack in my bag for the first few days?",
         "Pack a box of essentials: documents, chargers, toiletries, a change of clothes, some "
         "basic kitchen things and bedding for the first night."),
        ("Okay, I will start by looking at short term rentals this week.",
         "That is a good place to start. Read the reviews carefully, check the commute on a map, "
         "and good luck with the move and the new job."),
    ]),
    ("Preparing meals for the week", [
        ("I want to start cooking my meals for the whole week on Sundays.",
         "Meal preparation can save a lot of time and money. Start by planning just your "
         "lunches, so the first Sunday does not feel overwhelming."),
        ("What kind of dishes keep well in the fridge for days?",
         "Stews, curries, chilli, roasted vegetables and grain salads all keep well for three "
         "to four days, and some even taste better the next day."),
        ("I get bored eating the same thing every single day, though.",
         "Then cook a few basic parts instead of whole meals. Rice, a protein and roasted "
         "vegetables can be combined with different sauces each day."),
        ("Which containers should I buy for storing the meals?",
         "Glass containers with snap lids are a good choice. They go in the microwave, do not "
         "stain, and last much longer than thin plastic ones."),
        ("How long does the cooking usually take on a Sunday?",
         "For five lunches, expect around two hours, including washing up. It gets faster once "
         "you find a routine and a few favourite recipes."),
        ("Can I freeze some of the meals to keep them longer?",
         "Yes, soups, stews and sauces freeze very well for a few months. Salads and anything "
         "with a lot of raw vegetables are better eaten fresh."),
        ("What about breakfast, can I prepare that ahead of time too?",
         "Overnight oats are the classic option. Mix oats with milk or yoghurt in jars, add fruit, "
         "and breakfast is ready for several days."),
        ("How do I keep the food safe to eat during the week?",
         "Cool the food quickly, refrigerate it within two hours, and eat it within four days. "
         "When reheating, make sure it is hot all the way through."),
        ("Is meal preparation actually cheaper than buying lunch every day?",
         "Almost always. Buying ingredients in bulk and cooking once usually costs a fraction of "
         "daily takeaway lunches, so the savings are quick."),
        ("I will try a big pot of vegetable curry this Sunday.",
         "A great first choice, since curry keeps and reheats well. Make some rice alongside it, "
         "and you will have lunches ready for most of the week."),
    ]),
    ("Getting ready for a job interview", [
        ("I have a job interview on Thursday, and I am already nervous.",
         "Congratulations on getting the interview. Some nerves are normal and even helpful, and "
         "good preparation is the best way to calm them."),
        ("How should I research the company before the interview?",
         "Read their website, recent news and the job description carefully. Try to understand "
         "what problems the team is facing and how you could help them solve those."),
        ("They will probably ask me to talk about my weaknesses.",
         "Pick a real but manageable weakness, and explain what you are doing to improve it. "
         "Honesty plus a plan comes across much better than a cliche."),
        ("What is a good way to answer questions about past experience?",
         "Tell a short story: the situation, what you did, and the result. Concrete examples "
         "with numbers are much more convincing than general claims."),
        ("Should I prepare questions to ask them at the end?",
         "Definitely. Ask about the team, the first months in the role, or how success is "
         "measured. Good questions show real interest in the job."),
        ("What should I wear if the company seems quite casual?",
         "Dress one step smarter than their everyday style. Clean, simple clothes that you feel "
         "comfortable in are more important than a formal suit."),
        ("How early should I arrive at the office on the day?",
         "Aim to be nearby about fifteen minutes early, then walk in five to ten minutes before "
         "the time. Arriving too early can put pressure on them."),
        ("What if I do not know the answer to a question?",
         "Say so calmly, and explain how you would find the answer. Interviewers often value "
         "honest reasoning more than a perfect but bluffed reply."),
        ("Should I send a message after the interview is over?",
         "A short thank you email within a day is a nice touch. Mention something specific from "
         "the conversation, so it does not read like a template."),
        ("Thanks, I will practise my answers out loud tonight.",
         "That is the best preparation there is. Practise with a friend if you can, and remember "
         "to get a good night of sleep before Thursday."),
    ]),
    ("Getting into birdwatching", [
        ("I have recently become curious about the birds in my garden.",
         "That is a lovely interest to develop. Birdwatching can start right outside your "
         "window, and it makes every walk a little more interesting."),
        ("What equipment do I need to get started with birdwatching?",
         "A pair of binoculars and a field guide for your region are enough. Many people also "
         "use a free phone app that identifies birds by their song."),
        ("How do I choose a good pair of binoculars?",
         "Look for a magnification of eight, with a lens size around forty two. They give a "
         "bright, steady view and are light enough to carry all day."),
        ("What is the best time of day to see lots of birds?",
         "Early morning is usually best, when birds are most active and singing. The first hours "
         "after sunrise can be wonderfully busy in spring."),
        ("How can I attract more birds into my garden?",
         "Put out a feeder with seeds, a shallow dish of water, and plant native shrubs. Birds "
         "visit gardens that offer food, water and shelter."),
        ("All the small brown birds look exactly the same to me.",
         "They are tricky for everyone at first. Look at the beak shape, any markings on the "
         "head, and how the bird moves, and learn one species at a time."),
        ("Is it helpful to learn the bird songs as well?",
         "Very much. You often hear birds long before you see them, and knowing a few common "
         "songs lets you identify birds hidden in the leaves."),
        ("Should I keep a list of the birds I have seen?",
         "Many birders keep one, and it is fun to watch it grow. Some people also share their "
         "sightings online, which helps scientists track bird populations."),
        ("Are there birdwatching groups that welcome complete beginners?",
         "Yes, local nature clubs often run guided walks for beginners. Experienced members are "
         "usually delighted to help newcomers spot and identify birds."),
        ("I will hang a feeder outside the kitchen window this weekend.",
         "That is a great start. Be patient, because birds can take a week or two to find a new "
         "feeder, but once they do, they come back daily."),
    ]),
    ("Planning a road trip", [
        ("A few friends and I are planning a road trip this summer.",
         "That sounds like a great adventure. The best road trips balance driving with enough "
         "time to stop and explore the places along the way."),
        ("How many hours of driving per day is reasonable, do you think?",
         "Around four to five hours of driving a day keeps the trip relaxed. More than that, "
         "and the trip starts to feel like a long commute."),
        ("Should we book all the places to stay in advance?",
         "Booking the first and last nights is wise, and anything in popular areas. Leaving a "
         "few nights open gives you freedom to stay longer somewhere."),
        ("How should we share the costs fairly between four people?",
         "Use a shared expense app, and log fuel, food and rooms as you go. Settling up at the "
         "end avoids awkward conversations about money during the trip."),
        ("What should we check on the car before we leave?",
         "Check the tyres, including the spare, the oil, the coolant and the lights. A quick "
         "service before a long trip can prevent a lot of trouble."),
        ("We also argue a lot about the music in the car.",
         "Take turns choosing, say one hour each. A shared playlist, where everyone adds songs "
         "before the trip, also keeps everyone happy."),
        ("What snacks should we keep in the car while driving?",
         "Nuts, fruit, crackers and plenty of water are better than lots of sweets. They keep the "
         "driver alert without the sugar crash later on."),
        ("How do we avoid the driver getting too tired?",
         "Swap drivers every two hours, and take a proper break at each swap. If the driver "
         "yawns a lot, it is time to stop, no matter the plan."),
        ("Do we need any special documents for driving abroad?",
         "Bring your licence, the car papers and proof of insurance. Some countries also require "
         "an international permit or a toll sticker, so check ahead."),
        ("Great, we will plan a route along the coast, then.",
         "A coastal route sounds beautiful. Mark a few beaches and viewpoints along the way, and "
         "leave time for the surprises that make road trips special."),
    ]),
]
"""(title, rounds): ten (user, system) rounds per topic, in order."""

BACKGROUND = [
    "And now the weather for the weekend ahead.",
    "Has anyone seen my blue umbrella anywhere?",
    "The next train to the city leaves soon.",
    "Could you pass me the salt, please?",
    "Welcome back to the afternoon news program.",
    "I think we should order pizza tonight.",
    "Please remember to bring your library books.",
    "The meeting has been moved to Tuesday.",
    "Scores from last night's football games are in.",
    "Did you remember to feed the cat?",
    "Traffic is heavy on the main bridge today.",
    "Let's take the dog out for a walk.",
    "Our special guest joins us after the break.",
    "Where did you put the car keys?",
    "Sales on all garden furniture end today.",
    "I will call you back in five minutes.",
    "The museum closes early on Sundays.",
    "Tomorrow will be sunny with a light breeze.",
    "Can somebody open the window, please?",
    "This song has been at number one all month.",
]
"""Background speech: a television, a radio, people in the next room (said quietly)."""

BACKCHANNELS = ["mm-hm", "okay", "right", "yeah", "I see", "uh-huh"]
"""What the user says while the system replies."""
